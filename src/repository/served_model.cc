#include "repository/served_model.h"

#include <utility>

#include "core/strings.h"

namespace brigade::repository {

const char* VersionStateName(VersionState state) {
  switch (state) {
    case VersionState::kLoading:
      return "LOADING";
    case VersionState::kReady:
      return "READY";
    case VersionState::kUnloading:
      return "UNLOADING";
    case VersionState::kUnavailable:
      return "UNAVAILABLE";
  }
  return "UNAVAILABLE";
}

ServedModel::ServedModel(std::string name, std::map<int64_t, VersionSlot> versions,
                         std::string reason, std::shared_ptr<cache::ResponseCache> cache)
    : name_(std::move(name)),
      versions_(std::move(versions)),
      reason_(std::move(reason)),
      cache_(std::move(cache)) {}

absl::StatusOr<std::shared_ptr<ModelVersion>> ServedModel::Resolve(int64_t version) const {
  if (version < 0) {
    for (auto it = versions_.rbegin(); it != versions_.rend(); ++it) {
      if (it->second.state == VersionState::kReady && it->second.model != nullptr) {
        return it->second.model;
      }
    }
    return absl::UnavailableError(StrCat("model '", name_, "' has no ready version"));
  }
  auto it = versions_.find(version);
  if (it == versions_.end()) {
    return absl::NotFoundError(StrCat("model '", name_, "' has no version ", version));
  }
  if (it->second.state != VersionState::kReady || it->second.model == nullptr) {
    return absl::UnavailableError(StrCat("model '", name_, "' version ", version, " is not ready"));
  }
  return it->second.model;
}

std::vector<int64_t> ServedModel::ReadyVersions() const {
  std::vector<int64_t> ready;
  for (const auto& [version, slot] : versions_) {
    if (slot.state == VersionState::kReady) ready.push_back(version);
  }
  return ready;
}

std::vector<std::shared_ptr<ModelVersion>> ServedModel::ReadyModels() const {
  std::vector<std::shared_ptr<ModelVersion>> ready;
  for (const auto& [version, slot] : versions_) {
    if (slot.state == VersionState::kReady && slot.model != nullptr) ready.push_back(slot.model);
  }
  return ready;
}

}  // namespace brigade::repository
