#include "core/plain_file.h"

#include <fstream>
#include <iterator>
#include <system_error>

#include "core/strings.h"

namespace brigade {

absl::StatusOr<std::string> ReadPlainFile(const std::filesystem::path& dir, std::string_view name,
                                          uintmax_t max_bytes) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string_view::npos ||
      name.find('\0') != std::string_view::npos) {
    return absl::InvalidArgumentError(StrCat("'", name, "' is not a file name in ", dir.string()));
  }
  const std::filesystem::path path = dir / std::string(name);
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(path, error);
  if (error || !std::filesystem::is_regular_file(status)) {
    return absl::NotFoundError(StrCat(path.string(), " is not a regular file"));
  }
  const uintmax_t size = std::filesystem::file_size(path, error);
  if (error || size > max_bytes) {
    return absl::OutOfRangeError(StrCat(path.string(), " is larger than ", max_bytes, " bytes"));
  }
  std::string text(size, '\0');
  std::ifstream in(path, std::ios::binary);
  if (!in.read(text.data(), static_cast<std::streamsize>(size))) {
    return absl::DataLossError(StrCat("cannot read ", path.string()));
  }
  return text;
}

absl::StatusOr<std::filesystem::path> ResolveInsideDir(const std::filesystem::path& dir,
                                                       std::string_view relative) {
  namespace fs = std::filesystem;
  if (relative.find('\0') != std::string_view::npos) {
    return absl::InvalidArgumentError(StrCat("'", relative, "' has a NUL in it"));
  }
  const fs::path path{std::string(relative)};
  if (path.empty() || path.is_absolute() || path.has_root_name()) {
    return absl::InvalidArgumentError(
        StrCat("'", relative, "' is not a path relative to ", dir.string()));
  }
  std::error_code error;
  const fs::path root = fs::canonical(dir, error);
  if (error) {
    return absl::NotFoundError(StrCat(dir.string(), " cannot be resolved: ", error.message()));
  }
  // canonical() resolves every link in the directory itself; weakly_canonical() every link (and
  // "..") in what follows that exists, so the prefix comparison sees where the path really is.
  const fs::path resolved = fs::weakly_canonical(root / path, error);
  if (error) {
    return absl::InvalidArgumentError(
        StrCat("'", relative, "' cannot be resolved: ", error.message()));
  }
  auto root_it = root.begin();
  auto it = resolved.begin();
  for (; root_it != root.end(); ++root_it, ++it) {
    if (it == resolved.end() || *it != *root_it) {
      return absl::PermissionDeniedError(StrCat("'", relative, "' escapes ", root.string()));
    }
  }
  // A trailing separator leaves an empty last component: still the directory itself.
  if (it == resolved.end() || (std::next(it) == resolved.end() && it->empty())) {
    return absl::InvalidArgumentError(StrCat("'", relative, "' names ", root.string(), " itself"));
  }
  return resolved;
}

std::vector<std::string> SplitLabels(std::string_view text) {
  std::vector<std::string> lines;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.emplace_back(line);
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

}  // namespace brigade
