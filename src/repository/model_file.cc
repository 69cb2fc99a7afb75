#include "repository/model_file.h"

#include <fstream>
#include <system_error>

#include "core/strings.h"

namespace brigade::repository {

absl::StatusOr<std::string> ReadModelFile(const std::filesystem::path& dir, std::string_view name,
                                          std::string_view what, uintmax_t max_bytes) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string_view::npos ||
      name.find('\0') != std::string_view::npos) {
    return absl::InvalidArgumentError(
        StrCat(what, " '", name, "' must be a file name in ", dir.string(), ", without a path"));
  }
  const std::filesystem::path path = dir / std::string(name);
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(path, error);
  if (error || !std::filesystem::is_regular_file(status)) {
    return absl::NotFoundError(StrCat(what, ": ", path.string(), " is not a regular file"));
  }
  const uintmax_t size = std::filesystem::file_size(path, error);
  if (error || size > max_bytes) {
    return absl::InvalidArgumentError(
        StrCat(what, ": ", path.string(), " is larger than ", max_bytes, " bytes"));
  }
  std::string text(size, '\0');
  std::ifstream in(path, std::ios::binary);
  if (!in.read(text.data(), static_cast<std::streamsize>(size))) {
    return absl::NotFoundError(StrCat(what, ": cannot read ", path.string()));
  }
  return text;
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

}  // namespace brigade::repository
