#ifndef BRIGADE_CACHE_REDIS_TIER_H_
#define BRIGADE_CACHE_REDIS_TIER_H_

// RedisTier: the response cache's shared tier on Redis, as the rest of the cache uses it —
// ResponseCache's lookups and stores, CacheManager's invalidations, readiness and statistics —
// behind one small interface, so that response_cache.cc and cache_manager.cc read the same in a
// build without Redis. The build compiles exactly one side (src/cache/CMakeLists.txt):
//   BRIGADE_WITH_REDIS=ON    RedisCache (redis_cache.h) on hiredis; Create makes one.
//   BRIGADE_WITH_REDIS=OFF   redis_tier_none.cc, the edge preset: none of the Redis client is
//                            compiled and hiredis is not linked; Create refuses.
//
// Behaviour, threading and lifetime are RedisCache's (redis_cache.h): Get/Set/Invalidate never
// block and answer on an I/O thread (or inline, for immediate refusals); Close it, and destroy
// it, from a thread that is not one of its I/O threads; holders that can be released on an I/O
// thread keep a weak_ptr, and the owner calls Close() before it lets go.
// Failure: Create answers INVALID_ARGUMENT for bad options, and in a build without Redis
// FAILED_PRECONDITION for any options: a Redis tier asked for is never silently dropped (a
// server that believed it shared answers with its peers would serve as if alone). Once created,
// Redis slow or down never fails a call: lookups report kError, stores count their failures.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cache/cache_key.h"
#include "cache/cached_value.h"
#include "cache/circuit_breaker.h"
#include "cache/invalidation.h"
#include "cache/redis_stats.h"
#include "core/clock.h"

namespace brigade::cache {

class RedisTier {
 public:
  struct Options {
    std::string host = "127.0.0.1";
    int port = 6379;
    int connections = 2;
    absl::Duration timeout = absl::Milliseconds(2);
    absl::Duration control_timeout = absl::Seconds(1);
    absl::Duration connect_timeout = absl::Milliseconds(200);
    absl::Duration reconnect_min = absl::Milliseconds(10);
    absl::Duration reconnect_max = absl::Seconds(1);
    CircuitBreaker::Options breaker;
    std::string key_prefix = "brigade:rc";
    // Empty: <key_prefix>:invalidate.
    std::string channel;
    // Values larger than this are not written.
    size_t max_value_bytes = size_t{16} << 20;
    // Keys per SCAN step during invalidation.
    int scan_count = 1000;
    // Borrowed; must outlive the tier.
    const Clock* clock = Clock::Real();
    // Wall clock for the values' expiry stamps (shared across hosts). Tests substitute it.
    int64_t (*wall_now_ns)() = WallNowNs;
    std::function<void(const InvalidationScope&)> on_invalidation;
    std::function<void()> on_resync;
  };

  struct GetResult {
    enum class Outcome { kHit, kMiss, kExpired, kMismatch, kCorrupt, kError };
    Outcome outcome = Outcome::kMiss;
    std::shared_ptr<const CachedEntry> entry;  // kHit only
    // Until the value's own expiry (kHit); -1 when the value carries none.
    int64_t remaining_ttl_ms = -1;
    absl::Status error;  // kError and kCorrupt
  };
  using GetCallback = absl::AnyInvocable<void(GetResult)>;
  using DoneCallback = absl::AnyInvocable<void(absl::Status)>;

  // False in a build without Redis, where Create refuses.
  static bool InBuild();
  // The Redis tier for `options` (it keeps dialing when Redis is unreachable); see the class
  // comment for how it fails.
  static absl::StatusOr<std::unique_ptr<RedisTier>> Create(Options options);
  virtual ~RedisTier() = default;

  virtual void Get(std::shared_ptr<const CacheKey> key, GetCallback done) = 0;
  // Writes `value` (EncodeCachedValue) for `ttl_ms`. `done` (may be null) gets the outcome.
  virtual void Set(const CacheKey& key, std::string value, int64_t ttl_ms, DoneCallback done) = 0;
  // Deletes the scope's keys, then broadcasts the scope to the other processes on this Redis.
  virtual void Invalidate(const InvalidationScope& scope, DoneCallback done) = 0;
  // Answers outstanding callbacks UNAVAILABLE and joins the I/O threads; later calls are
  // refused at once. Idempotent; never from an I/O thread.
  virtual void Close() = 0;
  // Start-up and tests: waits until the tier is connected and subscribed.
  virtual bool WaitReady(absl::Duration timeout) const = 0;
  virtual RedisTierStats Stats() const = 0;
  virtual const Options& options() const = 0;
};

}  // namespace brigade::cache

#endif  // BRIGADE_CACHE_REDIS_TIER_H_
