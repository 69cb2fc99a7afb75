#ifndef BRIGADE_SERVER_INFERENCE_SERVER_H_
#define BRIGADE_SERVER_INFERENCE_SERVER_H_

// InferenceServer: Brigade's in-process API. The HTTP and gRPC front ends are thin clients of
// this class (as Triton's front ends are clients of its C API): they decode bytes into core's
// and protocol's types, call one method, and encode the answer. Everything between arrival and
// answer — routing, validation, caching, queueing, batching, execution, statistics — happens
// behind it, in the request pipeline's stages (pipeline/request_pipeline.h states their order).
//
// The server owns, and wires together once at start-up: the request observer (metrics, traces,
// access log), the cache manager (the Redis tier), the model repository (every model's
// ServedModel: versions, statistics, metrics and response cache) and the request pipeline.
//
// Thread safety: every method is safe to call from any thread, concurrently.
// Blocking: Infer() never blocks; it answers through the request's callback, possibly before it
// returns (e.g. validation errors) and otherwise from an instance thread. LoadModel/UnloadModel
// block until the change is done (a new version is loaded and warmed up before it is served).
// Errors: NOT_FOUND for unknown models/versions/inputs-by-name lookups, INVALID_ARGUMENT for bad
// requests (messages name the model and the input or field at fault), UNAVAILABLE when the server
// is draining, a model is not ready, or a queue is full.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/clock.h"
#include "core/infer_request.h"
#include "engine/model.h"
#include "protocol/log_settings.h"
#include "protocol/metadata.h"
#include "protocol/model_config.pb.h"
#include "protocol/repository_index.h"
#include "protocol/statistics.h"
#include "protocol/trace_settings.h"
#include "repository/control_mode.h"
#include "server/request_observer.h"

namespace brigade {

namespace engine {
class BackendRegistry;
}
namespace repository {
class ModelRepository;
}

// Triton's --model-control-mode (repository/control_mode.h).
using ModelControlMode = repository::ControlMode;

class InferenceServer {
 public:
  struct Options {
    // Root of the model repository (Triton layout).
    std::string model_repository;
    ModelControlMode control_mode = ModelControlMode::kNone;
    // Models loaded at start-up in explicit mode (Triton's --load-model); "*" loads all.
    std::vector<std::string> startup_models;
    // Poll mode: time between repository scans (at least a second).
    absl::Duration repository_poll_interval = absl::Seconds(15);
    // Abort start-up if any model fails to load (Triton's --exit-on-error, default true).
    bool exit_on_error = true;
    // Pin instance threads to cores (see scheduler/cpu_affinity.h).
    bool pin_threads = true;
    // Run to completion: a request for an idle model whose batch is predicted (p99) to take at
    // most this long runs on the front end's thread, with no hand-off to an instance thread
    // (scheduler/scheduler.h). Zero: always hand off.
    absl::Duration run_inline_max = absl::Microseconds(1000);
    // Serve model directories that are symbolic links resolving outside the repository
    // (repository::ModelRepository::Options::allow_symlinked_models); off by default.
    bool allow_symlinked_models = false;
    // Threads that run models' attached preprocess steps (pipeline::RequestPipeline::Options).
    int preprocess_threads = 1;
    // Response cache (models opt in with `response_cache { enable: true }` in config.pbtxt).
    // Redis tier: host (an IP address or a name, resolved by hiredis when it connects) and
    // port; empty host = memory tier only.
    std::string cache_redis_host;
    int cache_redis_port = 6379;
    // How long one Redis command may take before it counts as a miss (or a failed store).
    absl::Duration cache_redis_timeout = absl::Milliseconds(2);
    std::string cache_redis_key_prefix = "brigade:rc";
    // Metrics, tracing and access log settings.
    RequestObserver::Options observe;
    // Backends to load models with; must outlive the server. Null: the built-in registry.
    const engine::BackendRegistry* backends = nullptr;
    const Clock* clock = Clock::Real();
  };

  static absl::StatusOr<std::unique_ptr<InferenceServer>> Create(Options options);
  ~InferenceServer();

  InferenceServer(const InferenceServer&) = delete;
  InferenceServer& operator=(const InferenceServer&) = delete;

  // Health. Live until destroyed; ready once start-up models are loaded and until draining.
  bool IsLive() const;
  bool IsReady() const;
  protocol::ServerMetadata Metadata() const;

  // `version` -1 = the version the policy serves (the highest ready one). An unknown model or
  // version is not ready (false, not an error); UNAVAILABLE once the server is draining.
  absl::StatusOr<bool> ModelReady(std::string_view name, int64_t version) const;
  absl::StatusOr<protocol::ModelMetadata> GetModelMetadata(std::string_view name,
                                                           int64_t version) const;
  absl::StatusOr<config::ModelConfig> GetModelConfig(std::string_view name, int64_t version) const;

  // Runs one request; see the class comment. Always answers through request->on_complete.
  void Infer(std::unique_ptr<InferRequest> request);

  absl::StatusOr<std::vector<protocol::RepositoryIndexEntry>> RepositoryIndex(
      bool ready_only) const;
  absl::Status LoadModel(const protocol::LoadModelRequest& request);
  absl::Status UnloadModel(std::string_view name);

  // Drops cached answers: every model when `name` is empty, one model, or one version
  // (`version` >= 0), in this process and — through Redis pub/sub — in every other process
  // sharing the Redis tier. Waits up to `timeout` for Redis.
  absl::Status InvalidateCache(std::string_view name, int64_t version, absl::Duration timeout);

  // Triton's logging extension over the process's logger; server/log_control.h says which
  // changes are refused (each with the reason, leaving the settings as they were).
  protocol::LogSettings LogSettings() const;
  absl::StatusOr<protocol::LogSettings> UpdateLogSettings(
      const protocol::LogSettingsUpdate& update);

  // Triton's trace extension over the request observer's tracer (telemetry/trace_control.h):
  // `model` "" is the global settings; a model the repository does not know is NOT_FOUND.
  absl::StatusOr<protocol::TraceSettings> TraceSettings(std::string_view model) const;
  absl::StatusOr<protocol::TraceSettings> UpdateTraceSettings(
      std::string_view model, const protocol::TraceSettingsUpdate& update);

  // Statistics for one model (and version), or all models when `name` is empty.
  absl::StatusOr<std::vector<protocol::ModelStatistics>> Statistics(std::string_view name,
                                                                    int64_t version) const;

  // Readiness turns false, and nothing else: requests are still accepted and served, so that
  // load balancers see the server unready and stop sending before anything is refused (the
  // drain delay between a SIGTERM and StartDrain()).
  void MarkNotReady();
  // Readiness turns false and new inference requests get UNAVAILABLE; requests already accepted
  // finish. Returns at once; WaitIdle() waits for them.
  void StartDrain();
  // Waits until no request is in flight (nor any work after an answer, such as its cache store)
  // or `timeout` passes; true when idle.
  bool WaitIdle(absl::Duration timeout);
  // Requests accepted and not yet completely done (what a shutdown deadline would cut off).
  int64_t InFlight() const;

  const Clock* clock() const;

  // Where front ends report each finished request (at t5); lives as long as the server.
  RequestObserver* observer() const;
  // The Prometheus exposition (GET /metrics).
  std::string MetricsText() const;

  class Impl;
  // Use Create(); the tag keeps construction inside this class.
  struct ConstructionTag {
   private:
    friend class InferenceServer;
    ConstructionTag() = default;
  };
  InferenceServer(ConstructionTag, std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace brigade

#endif  // BRIGADE_SERVER_INFERENCE_SERVER_H_
