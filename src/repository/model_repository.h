#ifndef BRIGADE_REPOSITORY_MODEL_REPOSITORY_H_
#define BRIGADE_REPOSITORY_MODEL_REPOSITORY_H_

// ModelRepository: the models in a Triton-layout directory and the lifecycle of their versions.
//
//   <root>/<model>/config.pbtxt
//   <root>/<model>/<version>/model.{pt,onnx}
//
// Control modes (Triton's):
//   kNone      every model is loaded at start-up; the set never changes afterwards.
//   kPoll      as kNone, then the directory is rescanned every poll interval: new models and
//              versions load, removed ones unload, changed files or configs reload.
//   kExplicit  only the start-up list loads; Load()/Unload() change the set.
//
// Hot swap: a new or changed version is loaded and warmed up *before* it replaces the old one,
// so there is never a moment without a ready version; the old one is then drained — requests
// already queued on it finish — and released.
//
// Thread safety: all methods are thread-safe. Get() (the per-request lookup) takes a shared
// reader lock only. Lifecycle changes (start-up, Poll, Load, Unload) are serialized with one
// another and never hold the lookup lock while loading or draining.
// Failure: Get() answers NOT_FOUND for unknown models/versions and UNAVAILABLE for known ones
// with no ready version; lifecycle calls return the load error (a failed reload leaves the
// previous version serving).

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "core/clock.h"
#include "engine/backend.h"
#include "repository/config_parser.h"
#include "repository/model_version.h"

namespace brigade::repository {

enum class ControlMode { kNone, kPoll, kExplicit };

struct IndexEntry {
  std::string name;
  std::string version;  // empty when the model has no version slot
  std::string state;    // "READY", "LOADING", "UNLOADING", "UNAVAILABLE", or "" (never loaded)
  std::string reason;
};

class ModelRepository {
 public:
  struct Options {
    std::string root;
    ControlMode mode = ControlMode::kNone;
    // kExplicit: models loaded at start-up; "*" means all.
    std::vector<std::string> startup_models;
    int poll_interval_secs = 15;
    // Borrowed; must outlive the repository.
    const engine::BackendRegistry* backends = nullptr;
    const Clock* clock = Clock::Real();
    bool pin_threads = true;
    std::vector<int> cpus;

    // Hooks for components that keep per-model state (the response cache). Called on the thread
    // making the lifecycle change, with no repository lock held; they may call Get() and
    // ReadyVersions().
    // Extra config checks; an error fails the model's (re)load like a config error.
    std::function<absl::Status(const config::ModelConfig&)> validate_config;
    // After every lifecycle change of `model` (versions loaded, reloaded, retired, unloaded).
    std::function<void(const std::string& model)> on_model_changed;
    // The metrics handle of a version about to load (see ModelVersion::Options::metrics).
    std::function<telemetry::ModelRequestMetrics*(const std::string& model, int64_t version)>
        metrics_for;
  };

  // Creates the repository and loads the start-up models. Models that fail to load are recorded
  // (see Index()) and returned in `startup_errors`; they do not fail Create. Create fails only if
  // the root is not a readable directory.
  static absl::StatusOr<std::unique_ptr<ModelRepository>> Create(
      Options options, std::vector<absl::Status>* startup_errors);
  ~ModelRepository();

  ModelRepository(const ModelRepository&) = delete;
  ModelRepository& operator=(const ModelRepository&) = delete;

  // The ready version `version` of `name`, or the highest ready version when `version` is -1.
  absl::StatusOr<std::shared_ptr<ModelVersion>> Get(std::string_view name, int64_t version) const;
  // Ready versions of `name`, ascending; NOT_FOUND for an unknown model.
  absl::StatusOr<std::vector<int64_t>> ReadyVersions(std::string_view name) const;
  // Every model in the directory or loaded, one entry per version slot.
  std::vector<IndexEntry> Index(bool ready_only) const;
  // Every ready version (for statistics).
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
  enum class State { kLoading, kReady, kUnloading, kUnavailable };
  struct VersionSlot {
    State state = State::kUnavailable;
    std::string reason;
    std::shared_ptr<ModelVersion> model;
    std::string fingerprint;
  };
  struct ModelSlot {
    std::map<int64_t, VersionSlot> versions;
    std::string reason;  // model-level problem (bad config), shown when no version has one
  };

  absl::Status SyncModel(const std::string& name, const ParsedConfig* override)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(control_mu_);
  absl::Status UnloadAll(const std::string& name, const std::string& reason)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(control_mu_);
  void SetModelReason(const std::string& name, const std::string& reason);
  void NotifyChanged(const std::string& name) const;
  std::vector<std::string> ScanModelDirs() const;
  void PollLoop();
  static const char* StateName(State state);

  const Options options_;

  // Serializes lifecycle changes; never held by request-path lookups.
  absl::Mutex control_mu_;
  // Guards the model table; lookups take it shared.
  mutable absl::Mutex mu_;
  std::map<std::string, ModelSlot, std::less<>> models_ ABSL_GUARDED_BY(mu_);

  absl::Mutex poll_mu_;
  absl::CondVar poll_cv_;
  bool stop_polling_ ABSL_GUARDED_BY(poll_mu_) = false;
  std::thread poll_thread_;
};

}  // namespace brigade::repository

#endif  // BRIGADE_REPOSITORY_MODEL_REPOSITORY_H_
