#ifndef BRIGADE_REPOSITORY_SERVED_MODEL_H_
#define BRIGADE_REPOSITORY_SERVED_MODEL_H_

// ServedModel: everything the server holds for one model name, as one immutable value — the
// slot of every version the repository knows (state, reason, and for ready versions the loaded
// ModelVersion with its statistics and metrics) and the model's response cache.
//
// The repository owns the lifecycle: on every change of a model (a version loaded, reloaded,
// retired; the model unloaded) it builds the next ServedModel from the current one and publishes
// it in one step, so the request path never sees a version without its cache or a cache for a
// version that is gone. A request resolves the ServedModel once, at routing, and holds that
// snapshot until it is answered: versions and cache it uses stay alive even if the model is
// swapped meanwhile (a retired version is drained by the repository, and its queued requests
// finish on it).
//
// Thread safety: immutable after construction; every method is safe from any thread.
// Ownership: shared (std::shared_ptr<const ServedModel>) between the repository's table and the
// requests in flight. Failure: Resolve() answers NOT_FOUND for a version the model does not have
// and UNAVAILABLE for a known version (or the model) with nothing ready, naming the model.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cache/response_cache.h"
#include "repository/model_version.h"

namespace brigade::repository {

enum class VersionState { kLoading, kReady, kUnloading, kUnavailable };
// "LOADING", "READY", "UNLOADING", "UNAVAILABLE": the repository index's spelling.
const char* VersionStateName(VersionState state);

struct VersionSlot {
  VersionState state = VersionState::kUnavailable;
  std::string reason;
  // Set while a load of this version serves (also while its replacement loads).
  std::shared_ptr<ModelVersion> model;
  // The config and files `model` was loaded from (a reload is needed when they change).
  std::string fingerprint;
};

class ServedModel {
 public:
  ServedModel(std::string name, std::map<int64_t, VersionSlot> versions, std::string reason,
              std::shared_ptr<cache::ResponseCache> cache);

  const std::string& name() const { return name_; }
  // The ready version `version`, or the highest ready one when `version` is -1.
  absl::StatusOr<std::shared_ptr<ModelVersion>> Resolve(int64_t version) const;
  // Ready versions, ascending.
  std::vector<int64_t> ReadyVersions() const;
  // Every ready version's ModelVersion, ascending by version.
  std::vector<std::shared_ptr<ModelVersion>> ReadyModels() const;
  // Every slot, by version (the repository index lists them).
  const std::map<int64_t, VersionSlot>& versions() const { return versions_; }
  // A model-level problem (a bad config), shown when no version has a reason of its own.
  const std::string& reason() const { return reason_; }
  // The model's response cache; null when its config does not enable one.
  const std::shared_ptr<cache::ResponseCache>& cache() const { return cache_; }

 private:
  const std::string name_;
  const std::map<int64_t, VersionSlot> versions_;
  const std::string reason_;
  const std::shared_ptr<cache::ResponseCache> cache_;
};

}  // namespace brigade::repository

#endif  // BRIGADE_REPOSITORY_SERVED_MODEL_H_
