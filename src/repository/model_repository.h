#ifndef BRIGADE_REPOSITORY_MODEL_REPOSITORY_H_
#define BRIGADE_REPOSITORY_MODEL_REPOSITORY_H_

// ModelRepository: the models in a Triton-layout directory and the lifecycle of their versions.
//
//   <root>/<model>/config.pbtxt
//   <root>/<model>/<version>/model.{pt,onnx}
//
// Control modes: see control_mode.h.
//
// Ensembles (`platform: "ensemble"`) and routers (`platform: "brigade_router"`) load after the
// models their steps or variants name, and are checked against them then; a step model unloaded
// later makes that step fail with a clear error, a variant unloaded later is routed around.
//
// Hot swap: a new or changed version is loaded and warmed up *before* it replaces the old one,
// so there is never a moment without a ready version; the old one is then drained — requests
// already queued on it finish — and released. A version the policy no longer selects leaves only
// once every version it does select is ready: one that fails to load (a directory a scan saw
// before its files were copied in) leaves the versions it would replace serving.
//
// Each model is one ServedModel (served_model.h): its versions with their statistics and metrics,
// and its response cache, created from the model's config (`response_cache`) when it loads,
// kept across reloads that leave those settings alone (entries of versions no longer served are
// dropped), replaced by an empty one when they change, and gone when the model is unloaded.
// Every lifecycle change publishes a new ServedModel in one step.
//
// Thread safety: all methods are thread-safe. Find() and Get() (the per-request lookups) take a
// shared reader lock for a pointer copy only. Lifecycle changes (start-up, Poll, Load, Unload) are
// serialized with one another and never hold the lookup lock while loading or draining.
// Failure: Find() and Get() answer NOT_FOUND for unknown models (and Get() for unknown versions)
// and UNAVAILABLE for known ones with no ready version; lifecycle calls return the load error (a
// failed reload leaves the previous version serving; a bad `response_cache` section fails the
// model's load like any other config error).

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "cache/cache_manager.h"
#include "core/clock.h"
#include "engine/backend.h"
#include "protocol/model_config_parser.h"
#include "protocol/repository_index.h"
#include "repository/control_mode.h"
#include "repository/model_version.h"
#include "repository/served_model.h"
#include "telemetry/request_metrics.h"

namespace brigade::repository {

class ModelRepository {
 public:
  struct Options {
    std::string root;
    ControlMode mode = ControlMode::kNone;
    // kExplicit: models loaded at start-up; "*" means all.
    std::vector<std::string> startup_models;
    // kPoll: time between scans (at least a second).
    absl::Duration poll_interval = absl::Seconds(15);
    // Borrowed; must outlive the repository.
    const engine::BackendRegistry* backends = nullptr;
    const Clock* clock = Clock::Real();
    bool pin_threads = true;
    std::vector<int> cpus;
    // See ModelVersion::Options::run_inline_max.
    absl::Duration run_inline_max = absl::ZeroDuration();
    // A model directory that is a symbolic link resolving outside the root is refused (its load
    // fails saying so) unless this is set: whoever can write a link into the repository would
    // otherwise serve any directory of the host as a model.
    bool allow_symlinked_models = false;
    // Where models' response caches come from; borrowed, must outlive the repository. Null: a
    // model whose config enables a response cache fails to load, saying so.
    cache::CacheManager* caches = nullptr;
    // Where each version's live metrics go (queue length, in-flight, batches); borrowed, must
    // outlive the repository. Null: versions run without live metrics.
    telemetry::RequestMetrics* metrics = nullptr;
  };

  // Creates the repository and loads the start-up models. Models that fail to load are recorded
  // (see Index()) and returned in `startup_errors`; they do not fail Create. Create fails only if
  // the root is not a readable directory.
  static absl::StatusOr<std::unique_ptr<ModelRepository>> Create(
      Options options, std::vector<absl::Status>* startup_errors);
  ~ModelRepository();

  ModelRepository(const ModelRepository&) = delete;
  ModelRepository& operator=(const ModelRepository&) = delete;

  // The model as served now (see ServedModel); NOT_FOUND for a name the repository never loaded.
  absl::StatusOr<std::shared_ptr<const ServedModel>> Find(std::string_view name) const;
  // Find(name), then the ready version `version`, or the highest ready one when it is -1.
  absl::StatusOr<std::shared_ptr<ModelVersion>> Get(std::string_view name, int64_t version) const;
  // Ready versions of `name`, ascending; NOT_FOUND for an unknown model.
  absl::StatusOr<std::vector<int64_t>> ReadyVersions(std::string_view name) const;
  // Every model in the directory or loaded, one entry per version slot.
  std::vector<protocol::RepositoryIndexEntry> Index(bool ready_only) const;
  // Every model the repository knows, by name (for statistics and metrics).
  std::vector<std::shared_ptr<const ServedModel>> ServedModels() const;
  // Every ready version of every model.
  std::vector<std::shared_ptr<ModelVersion>> ReadyModels() const;

  // kExplicit only (FAILED_PRECONDITION otherwise). `config_json` overrides config.pbtxt.
  absl::Status Load(std::string_view name, std::string_view config_json);
  absl::Status Unload(std::string_view name);
  // One rescan of the directory (kPoll does this periodically; tests call it directly).
  absl::Status Poll();

  ControlMode mode() const { return options_.mode; }

  struct ConstructionTag {
   private:
    friend class ModelRepository;
    ConstructionTag() = default;
  };
  ModelRepository(ConstructionTag, Options options);

 private:
  // The next value of one model: what a lifecycle step changes, on a copy of the current one.
  struct Draft {
    std::map<int64_t, VersionSlot> versions;
    std::string reason;
    std::shared_ptr<cache::ResponseCache> cache;
  };

  // Applies `change` to a draft of `name` (an empty one for a new name) under the table lock and
  // publishes the result. `change` must not block.
  void Update(const std::string& name, absl::FunctionRef<void(Draft&)> change)
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status SyncModel(const std::string& name, const protocol::ParsedConfig* override)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(control_mu_);
  // Gives the model the cache its served config asks for (see the class comment).
  void SyncCache(const std::string& name) ABSL_EXCLUSIVE_LOCKS_REQUIRED(control_mu_);
  absl::Status UnloadAll(const std::string& name, const std::string& reason)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(control_mu_);
  std::vector<std::string> ScanModelDirs() const;
  // `names` reordered so every ensemble or router comes after the models it names.
  std::vector<std::string> LoadOrder(const std::vector<std::string>& names) const;
  // What an ensemble being loaded learns of the model one of its steps names.
  absl::StatusOr<route::StepModelSignature> StepSignature(std::string_view name,
                                                          int64_t version) const;
  void PollLoop();

  const Options options_;

  // Serializes lifecycle changes; never held by request-path lookups.
  absl::Mutex control_mu_;
  // Guards the model table; lookups take it shared.
  mutable absl::Mutex mu_;
  std::map<std::string, std::shared_ptr<const ServedModel>, std::less<>> models_
      ABSL_GUARDED_BY(mu_);

  absl::Mutex poll_mu_;
  absl::CondVar poll_cv_;
  bool stop_polling_ ABSL_GUARDED_BY(poll_mu_) = false;
  std::thread poll_thread_;
};

}  // namespace brigade::repository

#endif  // BRIGADE_REPOSITORY_MODEL_REPOSITORY_H_
