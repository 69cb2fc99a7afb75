#include "cache/response_cache.h"

#include <algorithm>
#include <atomic>
#include <utility>

#include "cache/redis_tier.h"
#include "core/status_macros.h"
#include "core/strings.h"

namespace brigade::cache {

struct ResponseCache::Counters {
  std::atomic<uint64_t> lookups{0}, memory_hits{0}, redis_hits{0}, bypassed{0}, refreshed{0},
      stores{0}, store_errors{0}, redis_misses{0}, redis_errors{0}, redis_stores{0},
      redis_store_errors{0};
  LatencyHistogram memory_hit, redis_hit, miss;
};

namespace {

void CountOne(std::atomic<uint64_t>& counter) { counter.fetch_add(1, std::memory_order_relaxed); }
uint64_t Read(const std::atomic<uint64_t>& counter) {
  return counter.load(std::memory_order_relaxed);
}

}  // namespace

std::string_view TierName(Tier tier) {
  switch (tier) {
    case Tier::kMemory:
      return "memory";
    case Tier::kRedis:
      return "redis";
    case Tier::kBoth:
      return "both";
  }
  return "unknown";
}

absl::Status CheckTierInBuild(std::string_view model_name, Tier tier) {
  if (tier == Tier::kMemory || RedisTier::InBuild()) return absl::OkStatus();
  return absl::FailedPreconditionError(
      StrCat("model '", model_name, "': response cache tier '", TierName(tier),
             "' needs Redis, but this binary was built without Redis (BRIGADE_WITH_REDIS=OFF, "
             "the edge preset); use tier TIER_MEMORY"));
}

absl::StatusOr<CacheControl> ParseCacheControl(const Parameters& request_parameters) {
  const ParameterValue* value = request_parameters.Find(kCacheControlParameter);
  if (value == nullptr) return CacheControl::kDefault;
  const std::string* text = std::get_if<std::string>(value);
  if (text != nullptr) {
    if (*text == "default") return CacheControl::kDefault;
    if (*text == "bypass") return CacheControl::kBypass;
    if (*text == "refresh") return CacheControl::kRefresh;
  }
  return absl::InvalidArgumentError(StrCat("request parameter '", kCacheControlParameter,
                                           "' must be \"default\", \"bypass\" or \"refresh\""));
}

absl::StatusOr<std::shared_ptr<ResponseCache>> ResponseCache::Create(std::string model_name,
                                                                     ResponseCacheOptions options,
                                                                     std::weak_ptr<RedisTier> redis,
                                                                     const Clock* clock) {
  if (clock == nullptr) return absl::InvalidArgumentError("response cache: clock is null");
  if (options.ttl_ms <= 0) {
    return absl::InvalidArgumentError(
        StrCat("model '", model_name, "': response cache ttl_ms must be positive"));
  }
  BRIGADE_RETURN_IF_ERROR(CheckTierInBuild(model_name, options.tier));
  if (options.tier != Tier::kMemory && redis.expired()) {
    return absl::InvalidArgumentError(StrCat("model '", model_name, "': response cache tier '",
                                             TierName(options.tier),
                                             "' needs a Redis server, and none is configured"));
  }
  std::unique_ptr<MemoryCache> memory;
  if (options.tier != Tier::kRedis) {
    MemoryCache::Options memory_options;
    memory_options.max_bytes = options.max_bytes;
    memory_options.shards = options.memory_shards;
    memory_options.clock = clock;
    absl::StatusOr<std::unique_ptr<MemoryCache>> created = MemoryCache::Create(memory_options);
    if (!created.ok()) {
      return absl::InvalidArgumentError(
          StrCat("model '", model_name, "': response cache: ", created.status().message()));
    }
    memory = *std::move(created);
  }
  return std::make_shared<ResponseCache>(ConstructionTag(), std::move(model_name),
                                         std::move(options), std::move(redis), clock,
                                         std::move(memory));
}

ResponseCache::ResponseCache(ConstructionTag, std::string model_name, ResponseCacheOptions options,
                             std::weak_ptr<RedisTier> redis, const Clock* clock,
                             std::unique_ptr<MemoryCache> memory)
    : model_name_(std::move(model_name)),
      options_(std::move(options)),
      redis_(std::move(redis)),
      clock_(clock),
      key_builder_(KeyBuilder::Options{options_.key_parameters, nullptr}),
      memory_(std::move(memory)),
      coalescer_(RequestCoalescer::Options{options_.max_coalesced_keys,
                                           options_.max_followers_per_key, 16}),
      counters_(std::make_unique<Counters>()) {}

ResponseCache::~ResponseCache() = default;

CacheKey ResponseCache::KeyFor(const InferRequest& request, int64_t version,
                               std::string_view model_fingerprint) const {
  return key_builder_.Build(request, version, model_fingerprint);
}

InferResponse ResponseCache::HitResponse(const CachedEntry& entry, const InferRequest& request) {
  InferResponse response;
  response.model_name = request.model_name;
  response.model_version = entry.model_version;
  response.id = request.id;
  response.parameters = entry.parameters;
  response.parameters.Set(std::string(kCacheHitParameter), true);
  response.execution.cache_hit = true;
  response.outputs = entry.outputs;
  response.clock = request.clock;
  return response;
}

void ResponseCache::Serve(std::unique_ptr<InferRequest> request, int64_t version,
                          std::string_view model_fingerprint,
                          std::shared_ptr<telemetry::ModelStats> stats, Runner run) {
  const int64_t start_ns = clock_->NowNs();
  absl::StatusOr<CacheControl> control = ParseCacheControl(request->parameters);
  if (!control.ok()) {
    request->Complete(absl::InvalidArgumentError(
        StrCat("model '", model_name_, "': ", control.status().message())));
    return;
  }
  if (*control == CacheControl::kBypass) {
    CountOne(counters_->bypassed);
    run(std::move(request), PendingStore{});  // no key: nothing to store, nobody to follow it
    return;
  }
  auto key = std::make_shared<const CacheKey>(KeyFor(*request, version, model_fingerprint));
  if (*control == CacheControl::kRefresh) {
    CountOne(counters_->refreshed);
    if (stats != nullptr) stats->RecordCacheMiss(clock_->NowNs() - start_ns);
    Execute(std::move(request), std::move(key), run);
    return;
  }
  Lookup(key, start_ns,
         [self = shared_from_this(), request = std::move(request), key, stats = std::move(stats),
          run = std::move(run)](const LookupResult& result) mutable {
           if (result.entry != nullptr) {
             if (stats != nullptr) stats->RecordCacheHit(result.lookup_ns);
             request->Complete(HitResponse(*result.entry, *request));
             return;
           }
           if (stats != nullptr) stats->RecordCacheMiss(result.lookup_ns);
           self->Execute(std::move(request), std::move(key), run);
         });
}

void ResponseCache::Lookup(const std::shared_ptr<const CacheKey>& key, int64_t start_ns,
                           absl::AnyInvocable<void(LookupResult)> done) {
  CountOne(counters_->lookups);
  if (memory_ != nullptr) {
    if (std::shared_ptr<const CachedEntry> entry = memory_->Lookup(*key)) {
      const int64_t lookup_ns = clock_->NowNs() - start_ns;
      CountOne(counters_->memory_hits);
      counters_->memory_hit.Record(lookup_ns);
      done({std::move(entry), Tier::kMemory, lookup_ns});
      return;
    }
  }
  std::shared_ptr<RedisTier> redis = uses_redis() ? redis_.lock() : nullptr;
  if (redis == nullptr) {
    const int64_t lookup_ns = clock_->NowNs() - start_ns;
    counters_->miss.Record(lookup_ns);
    done({nullptr, Tier::kMemory, lookup_ns});
    return;
  }
  redis->Get(key, [self = shared_from_this(), key, start_ns,
                   done = std::move(done)](RedisTier::GetResult result) mutable {
    Counters& counters = *self->counters_;
    const int64_t lookup_ns = self->clock_->NowNs() - start_ns;
    if (result.outcome != RedisTier::GetResult::Outcome::kHit) {
      CountOne(result.outcome == RedisTier::GetResult::Outcome::kError ? counters.redis_errors
                                                                       : counters.redis_misses);
      counters.miss.Record(lookup_ns);
      done({nullptr, Tier::kRedis, lookup_ns});
      return;
    }
    CountOne(counters.redis_hits);
    counters.redis_hit.Record(lookup_ns);
    if (self->memory_ != nullptr) {
      int64_t ttl_ms = self->options_.ttl_ms;
      if (result.remaining_ttl_ms > 0) ttl_ms = std::min(ttl_ms, result.remaining_ttl_ms);
      self->memory_->Insert(*key, result.entry, ttl_ms * 1'000'000);
    }
    done({std::move(result.entry), Tier::kRedis, lookup_ns});
  });
}

void ResponseCache::Execute(std::unique_ptr<InferRequest> request,
                            std::shared_ptr<const CacheKey> key, const Runner& run) {
  const uint64_t invalidations = invalidations_.load(std::memory_order_acquire);
  if (!options_.coalesce) {
    run(std::move(request), PendingStore{std::move(key), /*leader=*/false, invalidations});
    return;
  }
  RequestCoalescer::Admission admission = coalescer_.Admit(*key, std::move(request));
  if (admission.role == RequestCoalescer::Role::kFollower) return;
  const bool leader = admission.role == RequestCoalescer::Role::kLeader;
  run(std::move(admission.request), PendingStore{std::move(key), leader, invalidations});
}

void ResponseCache::Finish(const PendingStore& pending,
                           const absl::StatusOr<InferResponse>& outcome, const Runner& run) {
  if (pending.key == nullptr) return;  // a bypassed request: nothing to store or settle
  if (outcome.ok()) StoreUnlessInvalidated(*pending.key, *outcome, pending.invalidations);
  if (!pending.leader) return;
  // Followers that joined while this ran get the same answer; if this request failed for a
  // reason of its own (cancelled, deadline), they run again instead.
  std::vector<std::unique_ptr<InferRequest>> handed_back =
      coalescer_.Complete(*pending.key, outcome);
  for (std::unique_ptr<InferRequest>& follower : handed_back) {
    Execute(std::move(follower), pending.key, run);
  }
}

void ResponseCache::Store(const CacheKey& key, const InferResponse& response) {
  StoreUnlessInvalidated(key, response, invalidations_.load(std::memory_order_acquire));
}

void ResponseCache::StoreUnlessInvalidated(const CacheKey& key, const InferResponse& response,
                                           uint64_t invalidations) {
  // Checked here to skip the encoding, and again under the memory shard's lock: an invalidation
  // that lands while the answer is encoded must still win (the eraser bumps the count first).
  if (invalidations_.load(std::memory_order_acquire) != invalidations) return;
  std::shared_ptr<RedisTier> redis = uses_redis() ? redis_.lock() : nullptr;
  const int64_t expires_unix_ms =
      redis != nullptr ? redis->options().wall_now_ns() / 1'000'000 + options_.ttl_ms : 0;
  std::string value = EncodeCachedValue(key, response, expires_unix_ms);
  CountOne(counters_->stores);
  if (memory_ != nullptr) {
    // The Redis tier gets its own copy of the bytes; the memory tier keeps this one.
    auto blob = std::make_shared<const std::string>(redis != nullptr ? value : std::move(value));
    absl::StatusOr<std::shared_ptr<const CachedEntry>> entry = DecodeCachedValue(std::move(blob));
    if (!entry.ok()) {
      CountOne(counters_->store_errors);
      return;
    }
    const MemoryCache::InsertGuard guard{&invalidations_, invalidations};
    memory_->Insert(key, *std::move(entry), options_.ttl_ms * 1'000'000, &guard);
  }
  if (redis != nullptr) {
    CountOne(counters_->redis_stores);
    // `value` was moved above only when there is no Redis tier, which this branch excludes.
    // NOLINTNEXTLINE(bugprone-use-after-move)
    redis->Set(key, std::move(value), options_.ttl_ms,
               [self = shared_from_this()](const absl::Status& status) {
                 if (!status.ok()) CountOne(self->counters_->redis_store_errors);
               });
  }
}

size_t ResponseCache::DropVersion(int64_t version) {
  invalidations_.fetch_add(1, std::memory_order_acq_rel);
  return memory_ != nullptr ? memory_->EraseVersion(version) : 0;
}

size_t ResponseCache::RetainVersions(std::span<const int64_t> versions) {
  invalidations_.fetch_add(1, std::memory_order_acq_rel);
  return memory_ != nullptr ? memory_->EraseVersionsExcept(versions) : 0;
}

size_t ResponseCache::DropAll() {
  invalidations_.fetch_add(1, std::memory_order_acq_rel);
  return memory_ != nullptr ? memory_->Clear() : 0;
}

ResponseCacheStats ResponseCache::Stats() const {
  const Counters& c = *counters_;
  ResponseCacheStats stats;
  stats.model = model_name_;
  stats.tier = options_.tier;
  stats.lookups = Read(c.lookups);
  stats.hits = Read(c.memory_hits) + Read(c.redis_hits);
  stats.misses = stats.lookups >= stats.hits ? stats.lookups - stats.hits : 0;
  stats.hit_rate =
      stats.lookups == 0 ? 0 : static_cast<double>(stats.hits) / static_cast<double>(stats.lookups);
  stats.bypassed = Read(c.bypassed);
  stats.refreshed = Read(c.refreshed);
  stats.stores = Read(c.stores);
  stats.store_errors = Read(c.store_errors);
  if (memory_ != nullptr) stats.memory = memory_->Stats();
  stats.redis.hits = Read(c.redis_hits);
  stats.redis.misses = Read(c.redis_misses);
  stats.redis.errors = Read(c.redis_errors);
  stats.redis.stores = Read(c.redis_stores);
  stats.redis.store_errors = Read(c.redis_store_errors);
  stats.coalescer = coalescer_.Stats();
  stats.lookup_memory_hit = c.memory_hit.Snapshot();
  stats.lookup_redis_hit = c.redis_hit.Snapshot();
  stats.lookup_miss = c.miss.Snapshot();
  return stats;
}

}  // namespace brigade::cache
