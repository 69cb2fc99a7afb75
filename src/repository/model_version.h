#ifndef BRIGADE_REPOSITORY_MODEL_VERSION_H_
#define BRIGADE_REPOSITORY_MODEL_VERSION_H_

// ModelVersion: one loaded, warmed-up, servable version of a model — its completed config, the
// backend's Model, the statistics, and the Scheduler whose instances execute it. An ensemble
// (`platform: "ensemble"`) has no backend and no scheduler of its own: its version holds the
// compiled graph of steps (route/ensemble.h), each of which runs on its own model's scheduler. A
// router (`platform: "brigade_router"`) has neither: its version holds the routing policy
// (route/routing_policy.h) that picks, per request, the variant model that serves it.
//
// Load() does everything needed before a version may take traffic: picks the backend from the
// config (platform/backend, or the model file found), loads the model, reconciles the config's
// inputs/outputs with what the model declares (filling them in when the config has none),
// creates every instance and runs the warm-up on it. A version that Load() returns is ready.
//
// Thread safety: immutable after Load() except the scheduler and stats, which are thread-safe.
// Ownership: shared (std::shared_ptr) between the repository and requests being admitted, so a
// version being replaced stays alive until its last request is enqueued; the repository calls
// Drain() when it retires a version, which finishes queued requests and stops the instances.
// Failure: Load() returns the backend's error or INVALID_ARGUMENT naming the model and the
// input/output whose config disagrees with the model (for an ensemble, the step or tensor), and
// RESOURCE_EXHAUSTED when memory or a thread is refused while loading (the load fails, nothing
// else does).

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/clock.h"
#include "core/infer_request.h"
#include "engine/backend.h"
#include "protocol/model_config.pb.h"
#include "repository/attached_step.h"
#include "route/cascade.h"
#include "route/ensemble.h"
#include "route/routing_policy.h"
#include "scheduler/scheduler.h"
#include "telemetry/model_stats.h"
#include "telemetry/request_metrics.h"

namespace brigade::repository {

// An input or output as clients see it, aligned with the backend signature's order.
struct IoSpec {
  std::string name;
  DataType dtype = DataType::kInvalid;
  // Full shape as the protocol reports it; dimension 0 is -1 when the model batches.
  Shape shape;
  // Full shape the backend receives/produces (differs from `shape` under a config reshape).
  Shape model_shape;
  bool reshaped = false;
  bool optional = false;
  // Outputs: the class names of the config's label_filename (one per class index), for the
  // classification extension; null without one.
  std::shared_ptr<const std::vector<std::string>> labels;
};

class ModelVersion {
 public:
  struct Options {
    // <repository>/<model>
    std::string model_dir;
    int64_t version = 1;
    // Parsed and validated (protocol::ValidateModelConfig) config.
    config::ModelConfig config;
    // Borrowed; must outlive the version.
    const engine::BackendRegistry* backends = nullptr;
    const Clock* clock = Clock::Real();
    bool pin_threads = true;
    // CPUs instances may use; empty = all available.
    std::vector<int> cpus;
    // Identifies this load's contents (config and files); see fingerprint().
    std::string fingerprint;
    // Where this version's live metrics go (queue length, in-flight, batches); may be null.
    // Borrowed; must outlive the version (metrics handles live as long as the process).
    telemetry::ModelRequestMetrics* metrics = nullptr;
    // For an ensemble: the signatures of the models its steps name (see route::SignatureLookup).
    std::function<absl::StatusOr<route::StepModelSignature>(std::string_view, int64_t)> step_models;
    // Run to completion: a batch predicted to take at most this long (p99) may run on the
    // thread that enqueued it (scheduler::Scheduler::Options::run_inline_max_us); 0 = never.
    absl::Duration run_inline_max = absl::ZeroDuration();
  };

  static absl::StatusOr<std::shared_ptr<ModelVersion>> Load(Options options);
  ~ModelVersion();

  ModelVersion(const ModelVersion&) = delete;
  ModelVersion& operator=(const ModelVersion&) = delete;

  const std::string& name() const { return config_.name(); }
  int64_t version() const { return version_; }
  // The config as served: inputs/outputs, platform and backend filled in from the model.
  const config::ModelConfig& config() const { return config_; }
  const std::string& platform() const { return config_.platform(); }
  int max_batch_size() const { return config_.max_batch_size(); }
  const std::vector<IoSpec>& inputs() const { return inputs_; }
  const std::vector<IoSpec>& outputs() const { return outputs_; }
  // A short hash of the config and of every file's path, size and mtime in the version
  // directory: equal across processes serving the same files, different after any change. The
  // response cache puts it in its keys so a version reloaded in place never answers from the
  // previous load's entries.
  const std::string& fingerprint() const { return fingerprint_; }

  // The ensemble's graph, or null for a model that is not an ensemble.
  const std::shared_ptr<const route::Ensemble>& ensemble() const { return ensemble_; }
  // The router's policy, or null for a model that is not a router.
  const std::shared_ptr<const route::RoutingPolicy>& routing() const { return routing_; }
  // The router's confidence cascade, or null for a router without one (or a model).
  const std::shared_ptr<const route::Cascade>& cascade() const { return cascade_; }
  // The steps the config attaches (preprocess, postprocess), or null. With a preprocess,
  // inputs() are the clients' (the step's inputs) and the step gives the model's; with a
  // postprocess, outputs() are the clients' and the step takes the model's.
  const std::shared_ptr<const AttachedStep>& preprocess() const { return preprocess_; }
  const std::shared_ptr<const AttachedStep>& postprocess() const { return postprocess_; }
  // Hands a validated request (inputs in inputs() order, model-side shapes) to the scheduler.
  // Not for an ensemble or a router (they have none): the request pipeline runs an ensemble's
  // requests through ensemble() and routes a router's to a variant.
  void Enqueue(std::unique_ptr<InferRequest> request);
  telemetry::ModelStats& stats() const { return *stats_; }
  // Live metrics handle, or null when the server runs without one.
  telemetry::ModelRequestMetrics* metrics() const { return metrics_; }
  // Shared so request callbacks can record into it without pinning the whole version.
  std::shared_ptr<telemetry::ModelStats> stats_ptr() const { return stats_; }
  // The predicted p99 completion (absolute, Clock ns) of a request of `rows` rows arriving
  // now (scheduler::BatchQueue::PredictCompletionNs); -1 when unknown, or for an ensemble or a
  // router.
  int64_t PredictCompletionNs(int rows) const {
    return scheduler_ != nullptr ? scheduler_->PredictCompletionNs(rows) : -1;
  }
  // Requests queued on the scheduler; 0 for an ensemble or router (they queue on other models).
  size_t queue_size() const { return scheduler_ != nullptr ? scheduler_->queue_size() : 0; }
  // The scheduler's decisions and live load (for the scheduler's metrics families); none for
  // an ensemble or router.
  std::optional<scheduler::SchedulerSnapshot> scheduler_snapshot() const;

  // Finishes queued work and stops the instances; later requests get UNAVAILABLE. Idempotent.
  void Drain() {
    if (scheduler_ != nullptr) scheduler_->Drain();
  }

  struct ConstructionTag {
   private:
    friend class ModelVersion;
    ConstructionTag() = default;
  };
  ModelVersion(ConstructionTag, int64_t version, std::string fingerprint,
               config::ModelConfig config, std::vector<IoSpec> inputs, std::vector<IoSpec> outputs,
               std::shared_ptr<telemetry::ModelStats> stats,
               std::unique_ptr<scheduler::Scheduler> scheduler,
               std::shared_ptr<const route::Ensemble> ensemble,
               std::shared_ptr<const route::RoutingPolicy> routing);

 private:
  static absl::StatusOr<std::shared_ptr<ModelVersion>> LoadEnsemble(Options options);
  static absl::StatusOr<std::shared_ptr<ModelVersion>> LoadRouter(Options options);
  static absl::StatusOr<std::shared_ptr<ModelVersion>> LoadOnBackend(Options options);

  const int64_t version_;
  const std::string fingerprint_;
  const config::ModelConfig config_;
  const std::vector<IoSpec> inputs_;
  const std::vector<IoSpec> outputs_;
  const std::shared_ptr<telemetry::ModelStats> stats_;
  // Exactly one of the three is set.
  const std::unique_ptr<scheduler::Scheduler> scheduler_;
  const std::shared_ptr<const route::Ensemble> ensemble_;
  const std::shared_ptr<const route::RoutingPolicy> routing_;
  // Runs a router's cascade; set only with routing_, when it has one.
  std::shared_ptr<const route::Cascade> cascade_;
  std::shared_ptr<const AttachedStep> preprocess_;
  std::shared_ptr<const AttachedStep> postprocess_;
  telemetry::ModelRequestMetrics* metrics_ = nullptr;
};

}  // namespace brigade::repository

#endif  // BRIGADE_REPOSITORY_MODEL_VERSION_H_
