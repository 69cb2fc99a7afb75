#ifndef BRIGADE_CACHE_RESPONSE_CACHE_H_
#define BRIGADE_CACHE_RESPONSE_CACHE_H_

// ResponseCache: the response cache of one model, as the request path sees it. One per model
// (all its versions: the version is part of every key), configured from the model's
// `response_cache` settings (cache_config.h) and created by CacheManager.
//
// Request path (Serve):
//   1. `cache_control` request parameter: "bypass" skips the cache entirely (no lookup, no store,
//      no coalescing); "refresh" skips the lookup, runs the model and stores the fresh answer;
//      absent or "default" is the normal path; anything else is INVALID_ARGUMENT.
//   2. key (cache_key.h) → lookup: memory tier (inline, µs), then Redis (asynchronous, bounded by
//      its timeout); a Redis hit is copied into the memory tier (tier `both`) for the rest of its
//      TTL. A hit answers the request at once with the cached outputs, the request's own id and
//      stage clock, and the response parameter `cache_hit: true`; statistics get cache_hit.
//   3. miss (statistics get cache_miss): identical requests already running are joined
//      (request_coalescer.h); otherwise the request runs through `run`, with a PendingStore that
//      its owner hands back to Finish() once the request is answered: a successful answer is
//      stored in the configured tiers and given to the followers that joined meanwhile. The
//      cache never wraps a request's on_complete; its owner (the server's request pipeline)
//      decides where and when Finish runs. Errors are never cached.
// Redis slow or down turns Redis lookups into misses and stores into counted no-ops: requests
// never fail because of the cache.
//
// Immutability: stored answers are encoded copies (cached_value.h); hits share that immutable
// buffer, so a cached entry never aliases a backend buffer and hits never copy tensor bytes.
//
// Thread safety: every method may be called from any thread. Callbacks (the request's
// on_complete for hits, `run` for misses) run on the calling thread for memory-tier outcomes and
// on the Redis I/O thread for Redis outcomes; `run` must therefore not block (enqueueing into a
// scheduler is what it is for).
// Lifetime: shared. Asynchronous steps keep the cache alive; the Redis tier is held weakly (its
// owner, CacheManager, decides when Redis goes away; the cache then acts as memory-only).

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "cache/cache_key.h"
#include "cache/cached_value.h"
#include "cache/latency_histogram.h"
#include "cache/memory_cache.h"
#include "cache/request_coalescer.h"
#include "core/clock.h"
#include "core/infer_request.h"
#include "telemetry/model_stats.h"

namespace brigade::cache {

class RedisTier;

enum class Tier : uint8_t { kMemory, kRedis, kBoth };
std::string_view TierName(Tier tier);
// FAILED_PRECONDITION naming the model when `tier` needs Redis and this binary was built without
// it (redis_tier.h); OK otherwise. ResponseCache::Create checks it, and the model repository
// before it loads a model, so such a config fails the load instead of serving uncached.
absl::Status CheckTierInBuild(std::string_view model_name, Tier tier);

// Request parameter controlling the cache per request: "default" | "bypass" | "refresh".
inline constexpr std::string_view kCacheControlParameter = "cache_control";
// Response parameter (bool true) on answers served from the cache.
inline constexpr std::string_view kCacheHitParameter = "cache_hit";

enum class CacheControl { kDefault, kBypass, kRefresh };
// INVALID_ARGUMENT when the parameter is present but not one of the three strings.
absl::StatusOr<CacheControl> ParseCacheControl(const Parameters& request_parameters);

struct ResponseCacheOptions {
  Tier tier = Tier::kMemory;
  int64_t ttl_ms = 60'000;
  // Memory tier budget for this model (all versions).
  size_t max_bytes = size_t{64} << 20;
  // Request parameters that enter the key.
  std::vector<std::string> key_parameters;
  bool coalesce = true;
  size_t max_coalesced_keys = 4096;
  size_t max_followers_per_key = 64;
  int memory_shards = 16;

  friend bool operator==(const ResponseCacheOptions&, const ResponseCacheOptions&) = default;
};

struct RedisModelStats {
  uint64_t hits = 0;
  uint64_t misses = 0;  // key absent, or expired / mismatched / corrupt value
  uint64_t errors = 0;  // timeout, unavailable, open breaker: looked up as a miss
  uint64_t stores = 0;
  uint64_t store_errors = 0;
};

struct ResponseCacheStats {
  std::string model;
  Tier tier = Tier::kMemory;
  uint64_t lookups = 0;
  uint64_t hits = 0;
  uint64_t misses = 0;
  double hit_rate = 0;  // hits / lookups; 0 before the first lookup
  uint64_t bypassed = 0;
  uint64_t refreshed = 0;
  uint64_t stores = 0;
  uint64_t store_errors = 0;  // answers that could not be encoded/stored
  MemoryTierStats memory;     // all zero when the tier has no memory part
  RedisModelStats redis;
  CoalescerStats coalescer;
  // Key + lookup time, split by outcome.
  LatencySnapshot lookup_memory_hit;
  LatencySnapshot lookup_redis_hit;
  LatencySnapshot lookup_miss;
};

class ResponseCache : public std::enable_shared_from_this<ResponseCache> {
 public:
  // What a miss that runs carries to Finish(): its key, whether followers may wait on it, and the
  // invalidation count when it started (a removal since then cancels its store).
  struct PendingStore {
    std::shared_ptr<const CacheKey> key;
    bool leader = false;
    uint64_t invalidations = 0;
  };
  // Runs a request that missed (hands it to the scheduler) and keeps `pending` for Finish().
  // Called once per run, possibly on the Redis I/O thread; must not block.
  using Runner = std::function<void(std::unique_ptr<InferRequest>, PendingStore)>;

  // `redis` may be empty for tier memory; for tiers redis/both it must be set (the caller
  // checks: INVALID_ARGUMENT otherwise, and FAILED_PRECONDITION in a build without Redis, which
  // can never have one). `clock` is borrowed and must outlive the cache.
  static absl::StatusOr<std::shared_ptr<ResponseCache>> Create(std::string model_name,
                                                               ResponseCacheOptions options,
                                                               std::weak_ptr<RedisTier> redis,
                                                               const Clock* clock);

  // The whole cached request path (see the class comment). `request` is validated (inputs in
  // model order); it is answered exactly once, by the cache on a hit or a parameter error,
  // otherwise by whoever `run` hands it to. `version` is the resolved
  // version; `model_fingerprint` (may be empty) changes every key when the loaded model changes
  // without a version change. `stats` records cache_hit/cache_miss.
  void Serve(std::unique_ptr<InferRequest> request, int64_t version,
             std::string_view model_fingerprint, std::shared_ptr<telemetry::ModelStats> stats,
             Runner run);

  // After the answer of a request that `run` received (its owner calls this once, off the
  // instance thread where it can): stores a successful `outcome` unless an invalidation came in
  // since the request started, and for a leader gives `outcome` to its followers, or runs them
  // again through `run` when it failed for a reason of its own (cancelled, deadline).
  void Finish(const PendingStore& pending, const absl::StatusOr<InferResponse>& outcome,
              const Runner& run);

  // Building blocks of Serve, for callers that compose the path themselves.
  CacheKey KeyFor(const InferRequest& request, int64_t version,
                  std::string_view model_fingerprint) const;
  struct LookupResult {
    std::shared_ptr<const CachedEntry> entry;  // null: miss
    Tier tier = Tier::kMemory;                 // where the hit came from
    int64_t lookup_ns = 0;                     // from `start_ns` to the outcome
  };
  // Memory outcomes answer inline; Redis ones on the Redis I/O thread.
  void Lookup(const std::shared_ptr<const CacheKey>& key, int64_t start_ns,
              absl::AnyInvocable<void(LookupResult)> done);
  // Stores a successful answer in the configured tiers (copies its bytes).
  void Store(const CacheKey& key, const InferResponse& response);
  // The answer a hit gives `request`.
  static InferResponse HitResponse(const CachedEntry& entry, const InferRequest& request);

  // Local (memory tier) removal; CacheManager adds Redis deletion and the broadcast. Each also
  // cancels the stores of answers still being computed (they predate the invalidation).
  size_t DropVersion(int64_t version);
  // Keeps only the given versions (call after a reload with the versions now served).
  size_t RetainVersions(std::span<const int64_t> versions);
  size_t DropAll();

  ResponseCacheStats Stats() const;
  const std::string& model_name() const { return model_name_; }
  const ResponseCacheOptions& options() const { return options_; }

  struct Counters;
  struct ConstructionTag {
   private:
    friend class ResponseCache;
    ConstructionTag() = default;
  };
  ResponseCache(ConstructionTag, std::string model_name, ResponseCacheOptions options,
                std::weak_ptr<RedisTier> redis, const Clock* clock,
                std::unique_ptr<MemoryCache> memory);
  ~ResponseCache();

 private:
  bool uses_memory() const { return options_.tier != Tier::kRedis; }
  bool uses_redis() const { return options_.tier != Tier::kMemory; }
  void Execute(std::unique_ptr<InferRequest> request, std::shared_ptr<const CacheKey> key,
               const Runner& run);
  // Store() for an answer computed since `invalidations` removals had happened: stores nothing
  // in the memory tier if another removal came in, however late (see MemoryCache::InsertGuard).
  void StoreUnlessInvalidated(const CacheKey& key, const InferResponse& response,
                              uint64_t invalidations);

  const std::string model_name_;
  const ResponseCacheOptions options_;
  const std::weak_ptr<RedisTier> redis_;
  const Clock* const clock_;
  const KeyBuilder key_builder_;
  const std::unique_ptr<MemoryCache> memory_;  // null for tier redis
  RequestCoalescer coalescer_;
  std::unique_ptr<Counters> counters_;
  // Bumped by every local removal; a miss stores its answer only if none happened while it ran.
  // (A removal landing between that check and the insert itself is not caught: microseconds,
  // against the model's whole run before.)
  std::atomic<uint64_t> invalidations_{0};
};

}  // namespace brigade::cache

#endif  // BRIGADE_CACHE_RESPONSE_CACHE_H_
