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

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cache/cache_key.h"
#include "cache/invalidation.h"
#include "cache/redis_client.h"
#include "cache/redis_tier.h"
namespace brigade::cache {

// The implementation of RedisTier (redis_tier.h) in a build with Redis; its Options, GetResult
// and callbacks are RedisTier's.
class RedisCache final : public RedisTier {
 public:
  static absl::StatusOr<std::unique_ptr<RedisCache>> Create(Options options);
  // Closes (see Close()) if not closed yet.
  ~RedisCache() override;

  RedisCache(const RedisCache&) = delete;
  RedisCache& operator=(const RedisCache&) = delete;

  void Get(std::shared_ptr<const CacheKey> key, GetCallback done) override;
  // Writes `value` (EncodeCachedValue) for `ttl_ms`. `done` (may be null) gets the outcome.
  void Set(const CacheKey& key, std::string value, int64_t ttl_ms, DoneCallback done) override;
  void Invalidate(const InvalidationScope& scope, DoneCallback done) override;
  // Closes both clients (redis_client.h): outstanding callbacks are answered UNAVAILABLE and the
  // I/O threads joined; later calls are refused at once. Idempotent; never from an I/O thread.
  void Close() override;

  std::string KeyName(const CacheKey& key) const;
  // The SCAN MATCH pattern selecting `scope`'s keys (glob characters in names escaped).
  std::string MatchPattern(const InvalidationScope& scope) const;

  // Start-up and tests: waits until both clients are connected and subscribed.
  bool WaitReady(absl::Duration timeout) const override;
  RedisTierStats Stats() const override;
  // This process's id in invalidation messages.
  uint64_t origin() const { return origin_; }
  const Options& options() const override { return options_; }

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
