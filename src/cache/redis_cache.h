#ifndef BRIGADE_CACHE_REDIS_CACHE_H_
#define BRIGADE_CACHE_REDIS_CACHE_H_

// RedisCache: the shared tier. Cached answers live in Redis under
//   <key_prefix>:<len(model)>:<model>:<version>:<id as 32 hex digits>
// (the length prefix makes the model part unambiguous, so a pattern for model "a" never matches
// model "a:b"), as values in the cached_value.h format, written with `SET key value PX ttl`, so
// Redis expires them by itself. Every Brigade process pointed at the same Redis shares them.
//
// Two RedisClients, so slow maintenance never delays lookups:
//   data     GET/SET, `connections` pooled connections, strict `timeout` (default 2 ms);
//   control  SCAN/UNLINK/PUBLISH for invalidation (`control_timeout`), plus the pub/sub
//            subscriber that receives other processes' invalidations.
// Both have circuit breakers and reconnect by themselves (redis_client.h).
//
// Failure policy: Redis slow, down, or answering nonsense never fails a request. Get() reports
// kError (timeout, unavailable, open breaker), kCorrupt (undecodable value), kMismatch (the
// value under this id belongs to another request: a hash collision) or kExpired, each a miss to
// the caller, and counts them. Set() failures are counted and otherwise ignored.
//
// Invalidation: Invalidate() deletes the scope's keys (SCAN MATCH + UNLINK, batched) and then
// PUBLISHes the scope on `channel`, in that order, so a process that drops its memory entries
// on the message cannot refill them from Redis with the old answers. Received messages from
// other processes go to `on_invalidation`; after every (re)subscription `on_resync` runs, because
// messages sent while the subscriber was disconnected are lost (the owner drops its memory tier).
//
// Threading: Get/Set/Invalidate may be called from any thread and never block; their callbacks,
// `on_invalidation` and `on_resync` run on a client I/O thread (or inline, for immediate
// refusals). Close it, and destroy it, from a thread that is not one of its I/O threads; nothing
// inside it keeps it alive, so holders that can be released on an I/O thread keep a weak_ptr. A
// holder may lock that weak_ptr for a call even inside a callback, so the owner calls Close()
// before it lets go: the I/O threads are joined then, and a call that still holds the cache
// cannot be the last to release it on one of them.

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
#include "cache/redis_client.h"
#include "core/clock.h"

namespace brigade::cache {

struct RedisTierStats {
  uint64_t gets = 0;
  uint64_t hits = 0;
  uint64_t misses = 0;      // no such key
  uint64_t errors = 0;      // timeout, unavailable, open breaker, error reply
  uint64_t corrupt = 0;     // value failed to decode
  uint64_t mismatched = 0;  // value belongs to another request (collision)
  uint64_t expired = 0;     // value's own expiry passed (Redis had not dropped it yet)
  uint64_t sets = 0;
  uint64_t set_errors = 0;
  uint64_t set_too_large = 0;
  uint64_t invalidations_sent = 0;
  uint64_t invalidation_errors = 0;
  uint64_t invalidations_received = 0;
  uint64_t malformed_messages = 0;
  uint64_t keys_deleted = 0;
  uint64_t resyncs = 0;
  RedisClientStats data;
  RedisClientStats control;
};

class RedisCache {
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
    // Borrowed; must outlive the cache.
    const Clock* clock = Clock::Real();
    // Wall clock for the values' expiry stamps (shared across hosts). Tests substitute it.
    int64_t (*wall_now_ns)() = WallNowNs;
    std::function<void(const InvalidationScope&)> on_invalidation;
    std::function<void()> on_resync;
  };

  static absl::StatusOr<std::unique_ptr<RedisCache>> Create(Options options);
  // Closes (see Close()) if not closed yet.
  ~RedisCache();

  RedisCache(const RedisCache&) = delete;
  RedisCache& operator=(const RedisCache&) = delete;

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

  void Get(std::shared_ptr<const CacheKey> key, GetCallback done);
  // Writes `value` (EncodeCachedValue) for `ttl_ms`. `done` (optional) gets the outcome.
  void Set(const CacheKey& key, std::string value, int64_t ttl_ms, DoneCallback done = nullptr);
  void Invalidate(const InvalidationScope& scope, DoneCallback done);
  // Closes both clients (redis_client.h): outstanding callbacks are answered UNAVAILABLE and the
  // I/O threads joined; later calls are refused at once. Idempotent; never from an I/O thread.
  void Close();

  std::string KeyName(const CacheKey& key) const;
  // The SCAN MATCH pattern selecting `scope`'s keys (glob characters in names escaped).
  std::string MatchPattern(const InvalidationScope& scope) const;

  // Start-up and tests: waits until both clients are connected and subscribed.
  bool WaitReady(absl::Duration timeout) const;
  RedisTierStats Stats() const;
  // This process's id in invalidation messages.
  uint64_t origin() const { return origin_; }
  const Options& options() const { return options_; }

  struct Counters;
  struct ConstructionTag {
   private:
    friend class RedisCache;
    ConstructionTag() = default;
  };
  RedisCache(ConstructionTag, Options options, uint64_t origin, std::shared_ptr<Counters> counters);

 private:
  const Options options_;
  const uint64_t origin_;
  const std::shared_ptr<Counters> counters_;
  std::unique_ptr<RedisClient> data_;
  std::unique_ptr<RedisClient> control_;
};

std::string_view RedisOutcomeName(RedisCache::GetResult::Outcome outcome);

}  // namespace brigade::cache

#endif  // BRIGADE_CACHE_REDIS_CACHE_H_
