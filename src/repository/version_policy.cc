#include "repository/version_policy.h"

#include <algorithm>
#include <filesystem>

#include "core/strings.h"

namespace brigade::repository {

VersionSelection SelectVersions(const config::ModelVersionPolicy& policy,
                                std::vector<int64_t> available) {
  std::sort(available.begin(), available.end());
  available.erase(std::unique(available.begin(), available.end()), available.end());
  VersionSelection selection;
  switch (policy.policy_choice_case()) {
    case config::ModelVersionPolicy::kAll:
      selection.versions = available;
      break;
    case config::ModelVersionPolicy::kSpecific:
      for (int64_t version : policy.specific().versions()) {
        if (std::binary_search(available.begin(), available.end(), version)) {
          selection.versions.push_back(version);
        } else {
          selection.missing.push_back(version);
        }
      }
      std::sort(selection.versions.begin(), selection.versions.end());
      selection.versions.erase(std::unique(selection.versions.begin(), selection.versions.end()),
                               selection.versions.end());
      break;
    case config::ModelVersionPolicy::kLatest:
    case config::ModelVersionPolicy::POLICY_CHOICE_NOT_SET: {
      const size_t n = policy.has_latest() && policy.latest().num_versions() > 0
                           ? policy.latest().num_versions()
                           : 1;
      const size_t keep = std::min(n, available.size());
      selection.versions.assign(available.end() - static_cast<std::ptrdiff_t>(keep),
                                available.end());
      break;
    }
  }
  return selection;
}

std::vector<int64_t> ListVersionDirs(const std::string& model_dir) {
  std::vector<int64_t> versions;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(model_dir, error)) {
    if (!entry.is_directory(error)) continue;
    int64_t version = 0;
    if (ParseInteger(entry.path().filename().string(), &version) && version >= 0) {
      versions.push_back(version);
    }
  }
  std::sort(versions.begin(), versions.end());
  return versions;
}

}  // namespace brigade::repository
