#include "cache/cache_manager.h"

#include <memory>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "core/status_macros.h"
#include "core/strings.h"

namespace brigade::cache {

// Every cache the manager created and that is still alive. Shared with the Redis subscriber
// callbacks (weakly), which may run on the Redis I/O thread after the manager started shutting
// down. Not keyed by model: a model may briefly have two live caches (requests started before a
// reconfiguration finish with the old one), and an invalidation must reach both.
class CacheManager::Registry {
 public:
  void Add(const std::shared_ptr<ResponseCache>& cache) {
    absl::MutexLock lock(&mu_);
    // Creations are rare (model loads), so pruning here keeps the list as short as the live set.
    std::erase_if(caches_, [](const std::weak_ptr<ResponseCache>& weak) { return weak.expired(); });
    caches_.push_back(cache);
  }

  // Drops the scope's memory entries of every live cache it covers.
  void Drop(const InvalidationScope& scope) const {
    std::vector<std::shared_ptr<ResponseCache>> live;
    {
      absl::MutexLock lock(&mu_);
      for (const std::weak_ptr<ResponseCache>& weak : caches_) {
        if (std::shared_ptr<ResponseCache> cache = weak.lock()) live.push_back(std::move(cache));
      }
    }
    // Outside the lock: dropping entries takes the caches' own locks, and the last reference to
    // a cache may go here.
    for (const std::shared_ptr<ResponseCache>& cache : live) {
      if (!scope.CoversModel(cache->model_name())) continue;
      if (scope.kind == InvalidationScope::Kind::kModelVersion) {
        cache->DropVersion(scope.version);
      } else {
        cache->DropAll();
      }
    }
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<std::weak_ptr<ResponseCache>> caches_ ABSL_GUARDED_BY(mu_);
};

absl::StatusOr<std::unique_ptr<CacheManager>> CacheManager::Create(Options options) {
  if (options.clock == nullptr) return absl::InvalidArgumentError("cache manager: clock is null");
  auto registry = std::make_shared<Registry>();
  auto manager = std::make_unique<CacheManager>(ConstructionTag(), std::move(options), registry);
  if (!manager->options_.redis_host.empty()) {
    RedisTier::Options redis;
    redis.host = manager->options_.redis_host;
    redis.port = manager->options_.redis_port;
    redis.connections = manager->options_.redis_connections;
    redis.timeout = manager->options_.redis_timeout;
    redis.key_prefix = manager->options_.redis_key_prefix;
    redis.breaker = manager->options_.redis_breaker;
    redis.clock = manager->options_.clock;
    redis.wall_now_ns = manager->options_.wall_now_ns;
    std::weak_ptr<Registry> weak = registry;
    redis.on_invalidation = [weak](const InvalidationScope& scope) {
      if (std::shared_ptr<Registry> live = weak.lock()) live->Drop(scope);
    };
    redis.on_resync = [weak] {
      if (std::shared_ptr<Registry> live = weak.lock()) live->Drop(InvalidationScope::All());
    };
    BRIGADE_ASSIGN_OR_RETURN(std::unique_ptr<RedisTier> tier, RedisTier::Create(std::move(redis)));
    manager->redis_ = std::move(tier);
  }
  return manager;
}

CacheManager::CacheManager(ConstructionTag, Options options, std::shared_ptr<Registry> registry)
    : options_(std::move(options)), registry_(std::move(registry)) {}

CacheManager::~CacheManager() {
  // While this still holds the Redis tier: a cache's call may hold it too, on one of its I/O
  // threads (a store after a miss); once those threads are joined, no such call is left, so the
  // tier is never released last (and destroyed) on one of them.
  if (redis_ != nullptr) redis_->Close();
}

absl::StatusOr<std::shared_ptr<ResponseCache>> CacheManager::CreateCache(
    std::string_view model, const ResponseCacheOptions& options) {
  BRIGADE_ASSIGN_OR_RETURN(
      std::shared_ptr<ResponseCache> cache,
      ResponseCache::Create(std::string(model), options, redis_, options_.clock));
  registry_->Add(cache);
  return cache;
}

void CacheManager::Invalidate(const InvalidationScope& scope,
                              absl::AnyInvocable<void(absl::Status)> done) {
  registry_->Drop(scope);
  if (redis_ == nullptr) {
    if (done) done(absl::OkStatus());
    return;
  }
  redis_->Invalidate(scope, [scope, done = std::move(done)](absl::Status status) mutable {
    if (!status.ok()) {
      status = absl::Status(status.code(), StrCat("invalidating ", scope.ToString(),
                                                  " in Redis: ", status.message()));
    }
    if (done) done(std::move(status));
  });
}

absl::Status CacheManager::InvalidateAndWait(const InvalidationScope& scope,
                                             absl::Duration timeout) {
  struct Result {
    absl::Notification done;
    absl::Mutex mu;
    absl::Status status ABSL_GUARDED_BY(mu);
  };
  auto result = std::make_shared<Result>();
  Invalidate(scope, [result](absl::Status status) {
    {
      absl::MutexLock lock(&result->mu);
      result->status = std::move(status);
    }
    result->done.Notify();
  });
  if (!result->done.WaitForNotificationWithTimeout(timeout)) {
    return absl::DeadlineExceededError(
        StrCat("invalidating ", scope.ToString(), ": Redis did not finish in time"));
  }
  absl::MutexLock lock(&result->mu);
  return result->status;
}

std::optional<RedisTierStats> CacheManager::RedisStats() const {
  if (redis_ == nullptr) return std::nullopt;
  return redis_->Stats();
}

bool CacheManager::WaitRedisReady(absl::Duration timeout) const {
  return redis_ == nullptr || redis_->WaitReady(timeout);
}

}  // namespace brigade::cache
