#include "tools/analyze/point_repository.h"

#include <filesystem>
#include <fstream>

#include "core/strings.h"
#include "tools/analyze/config_generator.h"

namespace brigade::analyze {
namespace {

namespace fs = std::filesystem;

absl::Status FsError(std::string_view what, const fs::path& path, const std::error_code& error) {
  return absl::InternalError(StrCat("cannot ", what, " ", path.string(), ": ", error.message()));
}

}  // namespace

absl::Status WriteTextFile(const std::string& path, std::string_view contents) {
  const fs::path file_path(path);
  std::error_code error;
  if (file_path.has_parent_path()) {
    fs::create_directories(file_path.parent_path(), error);
    if (error) return FsError("create", file_path.parent_path(), error);
  }
  std::ofstream file(file_path, std::ios::binary | std::ios::trunc);
  file.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  file.close();
  if (!file) return absl::InternalError(StrCat("cannot write ", path));
  return absl::OkStatus();
}

absl::Status WritePointRepository(const std::string& variant_dir, const config::ModelConfig& config,
                                  std::string_view header, const std::string& root) {
  std::error_code error;
  const fs::path source = fs::absolute(variant_dir, error);
  if (error) return FsError("resolve", variant_dir, error);
  if (fs::exists(root, error) && !fs::is_empty(root, error)) {
    return absl::InternalError(StrCat("repository folder ", root, " is not empty"));
  }
  const fs::path model_dir = fs::path(root) / config.name();
  fs::create_directories(model_dir, error);
  if (error) return FsError("create", model_dir, error);
  fs::directory_iterator entry(source, error);
  for (; !error && entry != fs::directory_iterator(); entry.increment(error)) {
    const fs::path name = entry->path().filename();
    if (name == "config.pbtxt") continue;
    std::error_code link_error;
    fs::create_symlink(entry->path(), model_dir / name, link_error);
    if (link_error) return FsError("link", model_dir / name, link_error);
  }
  if (error) return FsError("list", source, error);
  return WriteTextFile((model_dir / "config.pbtxt").string(), ConfigToText(config, header));
}

}  // namespace brigade::analyze
