#include "server/inference_server.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "cache/cache_config.h"
#include "cache/cache_manager.h"
#include "cache/cache_metrics.h"
#include "core/status_macros.h"
#include "core/strings.h"
#include "protocol/failure_reason.h"
#include "repository/model_repository.h"
#include "scheduler/scheduler_metrics.h"
#include "server/default_backends.h"
#include "server/request_validator.h"
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
    repository::ModelRepository::Options repo_options;
    repo_options.root = options_.model_repository;
    repo_options.mode = options_.control_mode == ModelControlMode::kPoll ? repository::ControlMode::kPoll
                        : options_.control_mode == ModelControlMode::kExplicit
                            ? repository::ControlMode::kExplicit
                            : repository::ControlMode::kNone;
    repo_options.startup_models = options_.startup_models;
    repo_options.poll_interval_secs = options_.repository_poll_secs;
    repo_options.backends = backends_;
    repo_options.clock = options_.clock;
    repo_options.pin_threads = options_.pin_threads;

    cache::CacheManager::Options cache_options;
    cache_options.redis_host = options_.cache_redis_host;
    cache_options.redis_port = options_.cache_redis_port;
    cache_options.redis_timeout_us = options_.cache_redis_timeout_us;
    cache_options.redis_key_prefix = options_.cache_redis_key_prefix;
    cache_options.clock = options_.clock;
    BRIGADE_ASSIGN_OR_RETURN(cache_manager_, cache::CacheManager::Create(cache_options));
    if (cache_manager_->has_redis() && !cache_manager_->WaitRedisReady(2'000'000'000)) {
      spdlog::warn(
          "response cache: Redis at {}:{} is not reachable yet; its lookups count as misses "
          "until it is",
          options_.cache_redis_host, options_.cache_redis_port);
    }
    // A bad `response_cache` section fails the model's load, like any other config error.
    repo_options.validate_config = [](const config::ModelConfig& config) {
      return cache::ResponseCacheOptionsFromConfig(config.name(), config.response_cache()).status();
    };
    repo_options.on_model_changed = [this](const std::string& name) { SyncCache(name); };
    repo_options.metrics_for = [this](const std::string& name, int64_t version) {
      return observer_->ForModel(name, std::to_string(version));
    };

    std::vector<absl::Status> errors;
    BRIGADE_ASSIGN_OR_RETURN(repo_,
                             repository::ModelRepository::Create(std::move(repo_options), &errors));
    // Changes during Create() arrived before repo_ was set; catch up now.
    for (const auto& model : repo_->ReadyModels()) SyncCache(model->name());
    if (!errors.empty() && options_.exit_on_error) {
      std::string message = StrCat(errors.size(), " model(s) failed to load:");
      for (const absl::Status& error : errors) message += StrCat(" [", error.message(), "]");
      return absl::Status(errors[0].code(), message);
    }
    ready_.store(true, std::memory_order_release);
    return absl::OkStatus();
  }

  void Infer(std::unique_ptr<InferRequest> request) {
    const int64_t now_ns = options_.clock->NowNs();
    request->clock.MarkOnce(Stage::kArrival, now_ns);
    if (draining_.load(std::memory_order_acquire)) {
      request->Complete(absl::UnavailableError("server is shutting down"));
      return;
    }
    absl::StatusOr<std::shared_ptr<repository::ModelVersion>> model =
        repo_->Get(request->model_name, request->model_version);
    if (!model.ok()) {
      request->Complete(model.status());
      return;
    }
    std::shared_ptr<telemetry::ModelStats> stats = (*model)->stats_ptr();
    absl::Status valid = PrepareRequest(**model, request.get());
    if (!valid.ok()) {
      // A request that fails validation is Triton's OTHER whatever its code.
      stats->RecordFailure(protocol::FailureReason::kOther,
                           options_.clock->NowNs() - request->clock.at(Stage::kArrival));
      request->Complete(valid);
      return;
    }
    request->clock.Mark(Stage::kPreprocessed, options_.clock->NowNs());
    {
      absl::MutexLock lock(&idle_mu_);
      ++in_flight_;
    }
    std::shared_ptr<cache::ResponseCache> cache = FindCache(request->model_name);
    telemetry::ModelRequestMetrics* metrics = (*model)->metrics();
    if (metrics != nullptr) metrics->in_flight().Increment();
    request->on_complete =
        [this, stats = std::move(stats), metrics, arrival_ns = request->clock.at(Stage::kArrival),
         reply = std::move(request->on_complete)](absl::StatusOr<InferResponse> result) mutable {
          const int64_t elapsed_ns = options_.clock->NowNs() - arrival_ns;
          if (result.ok()) {
            stats->RecordSuccess(elapsed_ns);
          } else {
            stats->RecordFailure(protocol::FailureReasonOf(result.status()), elapsed_ns);
          }
          if (metrics != nullptr) metrics->in_flight().Decrement();
          reply(std::move(result));
          absl::MutexLock lock(&idle_mu_);
          --in_flight_;
        };
    if (cache != nullptr) {
      // Everything Serve needs is read before the model handle moves into the miss callback.
      std::shared_ptr<repository::ModelVersion> version = *std::move(model);
      const int64_t version_number = version->version();
      const std::string& fingerprint = version->fingerprint();  // kept alive by the callback
      auto stats_handle = version->stats_ptr();
      cache->Serve(
          std::move(request), version_number, fingerprint, std::move(stats_handle),
          [version](std::unique_ptr<InferRequest> miss) { version->Enqueue(std::move(miss)); });
      return;
    }
    (*model)->Enqueue(std::move(request));
  }

  // Keeps the model's response cache in step with its served config: created, reconfigured or
  // removed, and old versions' entries released.
  void SyncCache(const std::string& name) {
    if (repo_ == nullptr) return;
    std::shared_ptr<cache::ResponseCache> cache;
    absl::StatusOr<std::shared_ptr<repository::ModelVersion>> latest = repo_->Get(name, -1);
    if (latest.ok()) {
      absl::StatusOr<std::optional<cache::ResponseCacheOptions>> options =
          cache::ResponseCacheOptionsFromConfig(name, (*latest)->config().response_cache());
      if (options.ok() && options->has_value()) {
        absl::StatusOr<std::shared_ptr<cache::ResponseCache>> configured =
            cache_manager_->Configure(name, **options);
        if (configured.ok()) {
          cache = *std::move(configured);
          if (auto versions = repo_->ReadyVersions(name); versions.ok()) {
            cache->RetainVersions(*versions);
          }
        } else {
          spdlog::error("model '{}': response cache disabled: {}", name,
                        configured.status().message());
        }
      }
    }
    if (cache == nullptr) cache_manager_->Remove(name);
    absl::MutexLock lock(&caches_mu_);
    if (cache != nullptr) {
      caches_[name] = std::move(cache);
    } else {
      caches_.erase(name);
    }
    cached_models_.store(caches_.size(), std::memory_order_release);
  }

  std::shared_ptr<cache::ResponseCache> FindCache(std::string_view name) const {
    // Most deployments cache nothing: skip the lookup entirely then.
    if (cached_models_.load(std::memory_order_acquire) == 0) return nullptr;
    absl::ReaderMutexLock lock(&caches_mu_);
    auto it = caches_.find(name);
    return it == caches_.end() ? nullptr : it->second;
  }

  absl::StatusOr<protocol::ModelMetadata> Metadata(std::string_view name, int64_t version) const {
    BRIGADE_ASSIGN_OR_RETURN(std::shared_ptr<repository::ModelVersion> model, repo_->Get(name, version));
    protocol::ModelMetadata metadata;
    metadata.name = model->name();
    BRIGADE_ASSIGN_OR_RETURN(std::vector<int64_t> versions, repo_->ReadyVersions(name));
    for (int64_t v : versions) metadata.versions.push_back(std::to_string(v));
    metadata.platform = model->platform();
    for (const repository::IoSpec& io : model->inputs()) {
      metadata.inputs.push_back({io.name, io.dtype, io.shape});
    }
    for (const repository::IoSpec& io : model->outputs()) {
      metadata.outputs.push_back({io.name, io.dtype, io.shape});
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
    if (!name.empty()) BRIGADE_RETURN_IF_ERROR(repo_->ReadyVersions(name).status());
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
    draining_.store(true, std::memory_order_release);
    ready_.store(false, std::memory_order_release);
  }

  bool WaitIdle(int64_t timeout_ns) {
    absl::MutexLock lock(&idle_mu_);
    auto idle = [this]() ABSL_SHARED_LOCKS_REQUIRED(idle_mu_) { return in_flight_ == 0; };
    return idle_mu_.AwaitWithTimeout(absl::Condition(&idle), absl::Nanoseconds(timeout_ns));
  }

  const Options options_;
  std::unique_ptr<engine::BackendRegistry> owned_backends_;
  const engine::BackendRegistry* backends_ = nullptr;
  // Outlives the repository and the front ends (they report finished requests to it).
  std::unique_ptr<RequestObserver> observer_;
  // Declared before repo_ so it outlives it: draining models may still store answers.
  std::unique_ptr<cache::CacheManager> cache_manager_;
  mutable absl::Mutex caches_mu_;
  std::map<std::string, std::shared_ptr<cache::ResponseCache>, std::less<>> caches_
      ABSL_GUARDED_BY(caches_mu_);
  std::atomic<size_t> cached_models_{0};
  std::unique_ptr<repository::ModelRepository> repo_;
  std::atomic<bool> ready_{false};
  std::atomic<bool> draining_{false};
  mutable absl::Mutex idle_mu_;
  int64_t in_flight_ ABSL_GUARDED_BY(idle_mu_) = 0;
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
          {"binary_tensor_data", "parameters", "model_repository", "model_configuration",
           "statistics", "schedule_policy"}};
}

absl::StatusOr<bool> InferenceServer::ModelReady(std::string_view name, int64_t version) const {
  absl::StatusOr<std::shared_ptr<repository::ModelVersion>> model = impl_->repo_->Get(name, version);
  if (model.ok()) return !impl_->draining_.load(std::memory_order_acquire);
  if (model.status().code() == absl::StatusCode::kUnavailable) return false;
  return model.status();
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
  impl_->Infer(std::move(request));
}

absl::StatusOr<std::vector<protocol::RepositoryIndexEntry>> InferenceServer::RepositoryIndex(
    bool ready_only) const {
  std::vector<protocol::RepositoryIndexEntry> out;
  for (repository::IndexEntry& entry : impl_->repo_->Index(ready_only)) {
    out.push_back({std::move(entry.name), std::move(entry.version), std::move(entry.state),
                   std::move(entry.reason)});
  }
  return out;
}

absl::Status InferenceServer::LoadModel(const protocol::LoadModelRequest& request) {
  return impl_->repo_->Load(request.name, request.config_json);
}

absl::Status InferenceServer::UnloadModel(std::string_view name) {
  return impl_->repo_->Unload(name);
}

absl::Status InferenceServer::InvalidateCache(std::string_view name, int64_t version,
                                              int64_t timeout_ns) {
  if (name.empty() && version >= 0) {
    return absl::InvalidArgumentError("cache invalidation by version needs a model name");
  }
  const cache::InvalidationScope scope =
      name.empty()  ? cache::InvalidationScope::All()
      : version < 0 ? cache::InvalidationScope::Model(name)
                    : cache::InvalidationScope::ModelVersion(name, version);
  return impl_->cache_manager_->InvalidateAndWait(scope, timeout_ns);
}

absl::StatusOr<std::vector<protocol::ModelStatistics>> InferenceServer::Statistics(
    std::string_view name, int64_t version) const {
  return impl_->Statistics(name, version);
}

void InferenceServer::StartDrain() { impl_->StartDrain(); }

bool InferenceServer::WaitIdle(int64_t timeout_ns) { return impl_->WaitIdle(timeout_ns); }

const Clock* InferenceServer::clock() const { return impl_->options_.clock; }

RequestObserver* InferenceServer::observer() const { return impl_->observer_.get(); }

std::string InferenceServer::MetricsText() const {
  absl::StatusOr<std::vector<protocol::ModelStatistics>> stats = impl_->Statistics("", -1);
  std::string text = impl_->observer_->RenderMetrics(
      stats.ok() ? *stats : std::vector<protocol::ModelStatistics>{});
  // Why each version's scheduler batched, waited, refused or dropped what it did.
  std::vector<scheduler::SchedulerSnapshot> schedulers;
  for (const auto& model : impl_->repo_->ReadyModels()) {
    schedulers.push_back(model->scheduler_snapshot());
  }
  scheduler::AppendSchedulerMetrics(schedulers, &text);
  // The response cache per model and tier, and the health of its Redis tier.
  const std::vector<cache::ResponseCacheStats> caches = impl_->cache_manager_->Stats();
  cache::AppendCacheMetrics(caches, impl_->cache_manager_->RedisStats(), &text);
  return text;
}

}  // namespace brigade
