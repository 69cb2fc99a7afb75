#include "engine/backend.h"

#include <filesystem>

#include "absl/status/status.h"
#include "core/strings.h"

namespace brigade::engine {

void BackendRegistry::Register(std::unique_ptr<Backend> backend) {
  backends_.push_back(std::move(backend));
}

absl::StatusOr<Backend*> BackendRegistry::Find(std::string_view platform,
                                               std::string_view backend) const {
  if (!backend.empty()) {
    for (const auto& candidate : backends_) {
      if (candidate->name() == backend) return candidate.get();
    }
  }
  if (!platform.empty()) {
    for (const auto& candidate : backends_) {
      if (candidate->platform() == platform) return candidate.get();
    }
  }
  return absl::NotFoundError(StrCat("no backend for platform '", platform, "' backend '", backend,
                                    "'; available: ", fmt::format("{}", fmt::join(names(), ", "))));
}

Backend* BackendRegistry::FindByModelFile(const std::string& version_dir) const {
  std::error_code error;
  for (const auto& candidate : backends_) {
    const std::filesystem::path file =
        std::filesystem::path(version_dir) / std::string(candidate->default_model_filename());
    if (std::filesystem::exists(file, error)) return candidate.get();
  }
  return nullptr;
}

std::vector<std::string_view> BackendRegistry::names() const {
  std::vector<std::string_view> out;
  for (const auto& backend : backends_) out.push_back(backend->name());
  return out;
}

}  // namespace brigade::engine
