#ifndef BRIGADE_CACHE_CACHE_MANAGER_H_
#define BRIGADE_CACHE_CACHE_MANAGER_H_

// CacheManager: the process-wide side of the response cache. It owns the Redis tier (if a Redis
// address is configured), creates each model's ResponseCache (the model repository owns it, in
// the model's ServedModel), and carries invalidations to every cache it created, in every tier
// and every process:
//
//   Invalidate(scope)   drops the scope's entries from this process's memory tiers at once,
//                       then (with Redis) deletes its Redis keys and PUBLISHes the scope; every
//                       other Brigade process on that Redis drops the same memory entries when
//                       the message arrives. Scopes: all, a model, a model version.
//   Reload              the version is in every key, so a new version never sees old answers;
//                       after a reload call ResponseCache::RetainVersions(served versions) to
//                       free the old ones' memory (Redis copies expire by TTL). A model reloaded
//                       in place under the same version number must either pass a new
//                       fingerprint to Serve() or be invalidated with Invalidate(Model(name)).
//   Resync              after the subscriber (re)connects, messages sent meanwhile are lost, so
//                       every memory tier is cleared (Redis itself was invalidated by the sender).
//
// Thread safety: every method may be called from any thread. Invalidation callbacks run on a
// Redis I/O thread. Lifetime: destroy it after the request path stops using its caches (e.g.
// after the model repository drained); ResponseCaches that outlive it fall back to memory-only.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cache/invalidation.h"
#include "cache/redis_tier.h"
#include "cache/response_cache.h"
#include "core/clock.h"

namespace brigade::cache {

class CacheManager {
 public:
  struct Options {
    // Redis tier; empty host = no Redis (models asking for tier redis/both are refused). A
    // build without Redis refuses any host.
    std::string redis_host;
    int redis_port = 6379;
    int redis_connections = 2;
    absl::Duration redis_timeout = absl::Milliseconds(2);
    std::string redis_key_prefix = "brigade:rc";
    CircuitBreaker::Options redis_breaker;
    // Borrowed; must outlive the manager and every cache it creates.
    const Clock* clock = Clock::Real();
    int64_t (*wall_now_ns)() = WallNowNs;
  };

  // Fails on bad options, and with FAILED_PRECONDITION for a Redis host in a build without
  // Redis (redis_tier.h); does not fail when Redis is unreachable (it keeps dialing).
  static absl::StatusOr<std::unique_ptr<CacheManager>> Create(Options options);
  ~CacheManager();

  CacheManager(const CacheManager&) = delete;
  CacheManager& operator=(const CacheManager&) = delete;

  // A new, empty cache for `model`, on this manager's Redis tier. The caller owns it; the manager
  // holds it weakly, to deliver invalidations, until the last owner lets go (its memory is freed
  // then). INVALID_ARGUMENT naming the model for bad options.
  absl::StatusOr<std::shared_ptr<ResponseCache>> CreateCache(std::string_view model,
                                                             const ResponseCacheOptions& options);

  // See the class comment. `done` gets OK once every tier is done, or the Redis error (memory
  // tiers are dropped regardless); it may run before Invalidate returns.
  void Invalidate(const InvalidationScope& scope, absl::AnyInvocable<void(absl::Status)> done);
  // Blocking form for admin handlers: waits up to `timeout` for Redis. Never on a request path.
  absl::Status InvalidateAndWait(const InvalidationScope& scope, absl::Duration timeout);

  // Redis tier counters, when there is one.
  std::optional<RedisTierStats> RedisStats() const;
  bool has_redis() const { return redis_ != nullptr; }
  // For start-up and tests: waits until Redis is connected and subscribed (true at once
  // without Redis).
  bool WaitRedisReady(absl::Duration timeout) const;

  class Registry;
  struct ConstructionTag {
   private:
    friend class CacheManager;
    ConstructionTag() = default;
  };
  CacheManager(ConstructionTag, Options options, std::shared_ptr<Registry> registry);

 private:
  const Options options_;
  const std::shared_ptr<Registry> registry_;
  // Sole owner: the caches hold it weakly and lock it only for a call; the destructor closes it
  // before letting go, so it is always destroyed off its I/O threads (see redis_tier.h).
  std::shared_ptr<RedisTier> redis_;
};

}  // namespace brigade::cache

#endif  // BRIGADE_CACHE_CACHE_MANAGER_H_
