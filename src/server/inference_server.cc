#include "server/inference_server.h"

#include <atomic>
#include <utility>

#include "absl/time/time.h"
#include "cache/cache_manager.h"
#include "cache/cache_metrics.h"
#include "core/status_macros.h"
#include "core/strings.h"
#include "pipeline/request_pipeline.h"
#include "repository/model_repository.h"
#include "route/routing_metrics.h"
#include "scheduler/scheduler_metrics.h"
#include "server/default_backends.h"
#include "server/log_control.h"
#include "spdlog/spdlog.h"

#ifndef BRIGADE_VERSION
#define BRIGADE_VERSION "0.0.0"
#endif

namespace brigade {

class InferenceServer::Impl {
 public:
  explicit Impl(Options options) : options_(std::move(options)) {}

  absl::Status Start() {
    BRIGADE_ASSIGN_OR_RETURN(observer_, RequestObserver::Create(options_.observe));
    backends_ = options_.backends;
    if (backends_ == nullptr) {
      owned_backends_ = MakeDefaultBackendRegistry();
      backends_ = owned_backends_.get();
    }
    cache::CacheManager::Options cache_options;
    cache_options.redis_host = options_.cache_redis_host;
    cache_options.redis_port = options_.cache_redis_port;
    cache_options.redis_timeout = options_.cache_redis_timeout;
    cache_options.redis_key_prefix = options_.cache_redis_key_prefix;
    cache_options.clock = options_.clock;
    BRIGADE_ASSIGN_OR_RETURN(cache_manager_, cache::CacheManager::Create(cache_options));
    if (cache_manager_->has_redis() && !cache_manager_->WaitRedisReady(absl::Seconds(2))) {
      spdlog::warn(
          "response cache: Redis at {}:{} is not reachable yet; its lookups count as misses "
          "until it is",
          options_.cache_redis_host, options_.cache_redis_port);
    }

    repository::ModelRepository::Options repo_options;
    repo_options.root = options_.model_repository;
    repo_options.mode = options_.control_mode;
    repo_options.startup_models = options_.startup_models;
    repo_options.poll_interval = options_.repository_poll_interval;
    repo_options.backends = backends_;
    repo_options.clock = options_.clock;
    repo_options.pin_threads = options_.pin_threads;
    repo_options.run_inline_max = options_.run_inline_max;
    repo_options.allow_symlinked_models = options_.allow_symlinked_models;
    repo_options.caches = cache_manager_.get();
    repo_options.metrics = observer_->request_metrics();
    std::vector<absl::Status> errors;
    BRIGADE_ASSIGN_OR_RETURN(repo_,
                             repository::ModelRepository::Create(std::move(repo_options), &errors));
    if (!errors.empty() && options_.exit_on_error) {
      std::string message = StrCat(errors.size(), " model(s) failed to load:");
      for (const absl::Status& error : errors) message += StrCat(" [", error.message(), "]");
      return absl::Status(errors[0].code(), message);
    }
    BRIGADE_ASSIGN_OR_RETURN(pipeline_, pipeline::RequestPipeline::Create(
                                            {.repository = repo_.get(),
                                             .clock = options_.clock,
                                             .preprocess_threads = options_.preprocess_threads}));
    ready_.store(true, std::memory_order_release);
    return absl::OkStatus();
  }

  absl::StatusOr<protocol::ModelMetadata> Metadata(std::string_view name, int64_t version) const {
    BRIGADE_ASSIGN_OR_RETURN(std::shared_ptr<const repository::ServedModel> served,
                             repo_->Find(name));
    BRIGADE_ASSIGN_OR_RETURN(std::shared_ptr<repository::ModelVersion> model,
                             served->Resolve(version));
    protocol::ModelMetadata metadata;
    metadata.name = model->name();
    for (int64_t v : served->ReadyVersions()) metadata.versions.push_back(std::to_string(v));
    metadata.platform = model->platform();
    for (const repository::IoSpec& io : model->inputs()) {
      metadata.inputs.push_back({io.name, io.dtype, io.shape, ""});
    }
    for (const repository::IoSpec& io : model->outputs()) {
      metadata.outputs.push_back({io.name, io.dtype, io.shape, ""});
    }
    return metadata;
  }

  absl::StatusOr<std::vector<protocol::ModelStatistics>> Statistics(std::string_view name,
                                                                    int64_t version) const {
    std::vector<protocol::ModelStatistics> out;
    if (!name.empty() && version >= 0) {
      BRIGADE_ASSIGN_OR_RETURN(std::shared_ptr<repository::ModelVersion> model,
                               repo_->Get(name, version));
      out.push_back(SnapshotOf(*model));
      return out;
    }
    if (!name.empty()) BRIGADE_RETURN_IF_ERROR(repo_->Find(name).status());
    for (const auto& model : repo_->ReadyModels()) {
      if (name.empty() || model->name() == name) out.push_back(SnapshotOf(*model));
    }
    return out;
  }

  // Triton's counters plus Brigade's per-stage percentiles.
  protocol::ModelStatistics SnapshotOf(const repository::ModelVersion& model) const {
    protocol::ModelStatistics snapshot = model.stats().Snapshot();
    snapshot.stage_latency = observer_->StageSummary(snapshot.name, snapshot.version);
    return snapshot;
  }

  void StartDrain() {
    ready_.store(false, std::memory_order_release);
    if (pipeline_ != nullptr) pipeline_->StartDrain();
  }

  const Options options_;
  std::unique_ptr<engine::BackendRegistry> owned_backends_;
  const engine::BackendRegistry* backends_ = nullptr;
  // Outlives the repository and the front ends (they report finished requests to it).
  std::unique_ptr<RequestObserver> observer_;
  // Outlives the repository: its models' caches came from here, and draining models may still
  // store answers.
  std::unique_ptr<cache::CacheManager> cache_manager_;
  // Outlives the repository: a draining model's queued requests are answered through it.
  std::unique_ptr<pipeline::RequestPipeline> pipeline_;
  std::unique_ptr<repository::ModelRepository> repo_;
  std::atomic<bool> ready_{false};
  LogControl log_control_;
};

absl::StatusOr<std::unique_ptr<InferenceServer>> InferenceServer::Create(Options options) {
  auto impl = std::make_unique<Impl>(std::move(options));
  BRIGADE_RETURN_IF_ERROR(impl->Start());
  return std::make_unique<InferenceServer>(ConstructionTag(), std::move(impl));
}

InferenceServer::InferenceServer(ConstructionTag, std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}

InferenceServer::~InferenceServer() {
  impl_->StartDrain();
  impl_->repo_.reset();  // drains every model; queued requests are answered
}

bool InferenceServer::IsLive() const { return true; }
bool InferenceServer::IsReady() const { return impl_->ready_.load(std::memory_order_acquire); }

protocol::ServerMetadata InferenceServer::Metadata() const {
  return {"brigade",
          BRIGADE_VERSION,
          {"binary_tensor_data", "classification", "parameters", "model_repository",
           "model_configuration", "statistics", "schedule_policy", "logging", "trace",
           "system_shared_memory"}};
}

absl::StatusOr<bool> InferenceServer::ModelReady(std::string_view name, int64_t version) const {
  // A draining server reports no readiness at all, as Triton's does: an answer of "not ready"
  // would read as "wait and retry" to a client that should move to another server.
  if (impl_->pipeline_->draining()) {
    return absl::UnavailableError(
        StrCat("model '", name, "': the server is shutting down and reports no readiness"));
  }
  // Unknown, loading, failed and unloaded all read as "not ready", never as an error: clients
  // poll this until a model appears, and an error would end their loop.
  return impl_->repo_->Get(name, version).ok();
}

protocol::LogSettings InferenceServer::LogSettings() const { return impl_->log_control_.Get(); }

absl::StatusOr<protocol::LogSettings> InferenceServer::UpdateLogSettings(
    const protocol::LogSettingsUpdate& update) {
  return impl_->log_control_.Update(update);
}

absl::StatusOr<protocol::TraceSettings> InferenceServer::TraceSettings(
    std::string_view model) const {
  if (!model.empty()) BRIGADE_RETURN_IF_ERROR(impl_->repo_->Find(model).status());
  return impl_->observer_->trace_control()->Get(model);
}

absl::StatusOr<protocol::TraceSettings> InferenceServer::UpdateTraceSettings(
    std::string_view model, const protocol::TraceSettingsUpdate& update) {
  if (!model.empty()) BRIGADE_RETURN_IF_ERROR(impl_->repo_->Find(model).status());
  return impl_->observer_->trace_control()->Update(model, update);
}

absl::StatusOr<protocol::ModelMetadata> InferenceServer::GetModelMetadata(std::string_view name,
                                                                          int64_t version) const {
  return impl_->Metadata(name, version);
}

absl::StatusOr<config::ModelConfig> InferenceServer::GetModelConfig(std::string_view name,
                                                                    int64_t version) const {
  BRIGADE_ASSIGN_OR_RETURN(std::shared_ptr<repository::ModelVersion> model,
                           impl_->repo_->Get(name, version));
  return model->config();
}

void InferenceServer::Infer(std::unique_ptr<InferRequest> request) {
  impl_->pipeline_->Infer(std::move(request));
}

absl::StatusOr<std::vector<protocol::RepositoryIndexEntry>> InferenceServer::RepositoryIndex(
    bool ready_only) const {
  return impl_->repo_->Index(ready_only);
}

absl::Status InferenceServer::LoadModel(const protocol::LoadModelRequest& request) {
  return impl_->repo_->Load(request.name, request.config_json);
}

absl::Status InferenceServer::UnloadModel(std::string_view name) {
  return impl_->repo_->Unload(name);
}

absl::Status InferenceServer::InvalidateCache(std::string_view name, int64_t version,
                                              absl::Duration timeout) {
  if (name.empty() && version >= 0) {
    return absl::InvalidArgumentError("cache invalidation by version needs a model name");
  }
  const cache::InvalidationScope scope =
      name.empty()  ? cache::InvalidationScope::All()
      : version < 0 ? cache::InvalidationScope::Model(name)
                    : cache::InvalidationScope::ModelVersion(name, version);
  return impl_->cache_manager_->InvalidateAndWait(scope, timeout);
}

absl::StatusOr<std::vector<protocol::ModelStatistics>> InferenceServer::Statistics(
    std::string_view name, int64_t version) const {
  return impl_->Statistics(name, version);
}

void InferenceServer::MarkNotReady() { impl_->ready_.store(false, std::memory_order_release); }

void InferenceServer::StartDrain() { impl_->StartDrain(); }

bool InferenceServer::WaitIdle(absl::Duration timeout) {
  return impl_->pipeline_->WaitIdle(timeout);
}

int64_t InferenceServer::InFlight() const { return impl_->pipeline_->in_flight(); }

const Clock* InferenceServer::clock() const { return impl_->options_.clock; }

RequestObserver* InferenceServer::observer() const { return impl_->observer_.get(); }

std::string InferenceServer::MetricsText() const {
  absl::StatusOr<std::vector<protocol::ModelStatistics>> stats = impl_->Statistics("", -1);
  std::string text = impl_->observer_->RenderMetrics(
      stats.ok() ? *stats : std::vector<protocol::ModelStatistics>{});
  // Why each version's scheduler batched, waited, refused or dropped what it did.
  std::vector<scheduler::SchedulerSnapshot> schedulers;
  for (const auto& model : impl_->repo_->ReadyModels()) {
    // An ensemble has no scheduler of its own; its steps' models report theirs.
    if (std::optional<scheduler::SchedulerSnapshot> snapshot = model->scheduler_snapshot()) {
      schedulers.push_back(*std::move(snapshot));
    }
  }
  scheduler::AppendSchedulerMetrics(schedulers, &text);
  // Each router's decisions, per variant and reason.
  std::vector<route::RouterSample> routers;
  for (const auto& model : impl_->repo_->ReadyModels()) {
    if (model->routing() != nullptr) routers.push_back({model->routing().get(), model->version()});
  }
  route::AppendRoutingMetrics(routers, &text);
  // Each ensemble switch's decisions, per branch.
  std::vector<route::EnsembleSample> ensembles;
  for (const auto& model : impl_->repo_->ReadyModels()) {
    if (model->ensemble() != nullptr)
      ensembles.push_back({model->ensemble().get(), model->version()});
  }
  route::AppendEnsembleBranchMetrics(ensembles, &text);
  // The response cache per model and tier, and the health of its Redis tier.
  std::vector<cache::ResponseCacheStats> caches;
  for (const auto& served : impl_->repo_->ServedModels()) {
    if (served->cache() != nullptr) caches.push_back(served->cache()->Stats());
  }
  cache::AppendCacheMetrics(caches, impl_->cache_manager_->RedisStats(), &text);
  return text;
}

}  // namespace brigade
