#include "cache/cache_metrics.h"

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "cache/latency_histogram.h"
#include "telemetry/histogram.h"
#include "telemetry/prometheus_text.h"

namespace brigade::cache {
namespace {

using telemetry::HistogramBuckets;
using telemetry::HistogramSnapshot;
using telemetry::LabelPair;
using telemetry::MetricType;
using telemetry::PrometheusTextWriter;

constexpr std::string_view kPrefix = "brigade_response_cache_";

std::string Name(std::string_view suffix) { return std::string(kPrefix).append(suffix); }

// Writes per-model families: HELP/TYPE once, then `samples` for every model's stats.
class ModelFamilies {
 public:
  ModelFamilies(std::span<const ResponseCacheStats> caches, PrometheusTextWriter* writer)
      : caches_(caches), writer_(writer) {}

  using Samples = std::function<void(const std::string& name, const ResponseCacheStats& stats,
                                     std::string_view model)>;

  void Family(std::string_view suffix, std::string_view help, MetricType type,
              const Samples& samples) {
    const std::string name = Name(suffix);
    writer_->Family(name, help, type);
    for (const ResponseCacheStats& stats : caches_) samples(name, stats, stats.model);
  }

  // One sample per model.
  void Single(std::string_view suffix, std::string_view help, MetricType type,
              const std::function<double(const ResponseCacheStats&)>& value) {
    Family(suffix, help, type,
           [&](const std::string& name, const ResponseCacheStats& stats, std::string_view model) {
             const LabelPair labels[] = {{"model", model}};
             writer_->Sample(name, labels, value(stats));
           });
  }

  // One sample per model and value of `label`.
  struct Labeled {
    std::string_view value;
    std::function<double(const ResponseCacheStats&)> read;
  };
  void ByLabel(std::string_view suffix, std::string_view help, MetricType type,
               std::string_view label, const std::vector<Labeled>& values) {
    Family(suffix, help, type,
           [&](const std::string& name, const ResponseCacheStats& stats, std::string_view model) {
             for (const Labeled& labeled : values) {
               const LabelPair labels[] = {{"model", model}, {label, labeled.value}};
               writer_->Sample(name, labels, labeled.read(stats));
             }
           });
  }

  PrometheusTextWriter& writer() { return *writer_; }

 private:
  std::span<const ResponseCacheStats> caches_;
  PrometheusTextWriter* writer_;
};

double D(uint64_t value) { return static_cast<double>(value); }

// The cache's lookup histogram bounds (ns, fixed; see latency_histogram.h), exposed in seconds.
const HistogramBuckets& LookupBuckets() {
  static const HistogramBuckets buckets =
      *HistogramBuckets::Create(LatencyHistogram().Snapshot().upper_bounds_ns, 1'000'000'000);
  return buckets;
}

void AppendModelFamilies(std::span<const ResponseCacheStats> caches, PrometheusTextWriter* out) {
  ModelFamilies f(caches, out);
  f.Single("lookups_total", "Requests that looked the response cache up", MetricType::kCounter,
           [](const ResponseCacheStats& s) { return D(s.lookups); });
  f.ByLabel("hits_total", "Requests answered from the response cache, by tier",
            MetricType::kCounter, "tier",
            {{"memory", [](const ResponseCacheStats& s) { return D(s.memory.hits); }},
             {"redis", [](const ResponseCacheStats& s) { return D(s.redis.hits); }}});
  f.Single("misses_total", "Response cache lookups that found no usable answer",
           MetricType::kCounter, [](const ResponseCacheStats& s) { return D(s.misses); });
  f.Single("hit_ratio", "Response cache hits / lookups since start", MetricType::kGauge,
           [](const ResponseCacheStats& s) { return s.hit_rate; });
  f.ByLabel("control_total", "Requests whose cache_control skipped the lookup",
            MetricType::kCounter, "control",
            {{"bypass", [](const ResponseCacheStats& s) { return D(s.bypassed); }},
             {"refresh", [](const ResponseCacheStats& s) { return D(s.refreshed); }}});
  f.Single("stores_total", "Answers stored in the response cache", MetricType::kCounter,
           [](const ResponseCacheStats& s) { return D(s.stores); });
  f.ByLabel("store_errors_total", "Answers that could not be stored, by tier", MetricType::kCounter,
            "tier",
            {{"memory", [](const ResponseCacheStats& s) { return D(s.store_errors); }},
             {"redis", [](const ResponseCacheStats& s) { return D(s.redis.store_errors); }}});
  f.ByLabel("evictions_total", "Entries removed to make room", MetricType::kCounter, "tier",
            {{"memory", [](const ResponseCacheStats& s) { return D(s.memory.evictions); }}});
  f.ByLabel("expirations_total", "Entries removed because their TTL passed", MetricType::kCounter,
            "tier",
            {{"memory", [](const ResponseCacheStats& s) { return D(s.memory.expirations); }}});
  f.ByLabel("collisions_total", "Entries found under a request's id that belong to another",
            MetricType::kCounter, "tier",
            {{"memory", [](const ResponseCacheStats& s) { return D(s.memory.collisions); }}});
  f.Single("redis_errors_total", "Redis lookups that failed and were served as misses",
           MetricType::kCounter, [](const ResponseCacheStats& s) { return D(s.redis.errors); });
  f.Single("memory_bytes", "Bytes held by the in-process tier", MetricType::kGauge,
           [](const ResponseCacheStats& s) { return D(s.memory.bytes_used); });
  f.Single("memory_entries", "Entries held by the in-process tier", MetricType::kGauge,
           [](const ResponseCacheStats& s) { return D(s.memory.entries); });
  f.Single("memory_max_bytes", "Byte budget of the in-process tier", MetricType::kGauge,
           [](const ResponseCacheStats& s) { return D(s.memory.max_bytes); });
  f.Single("coalesced_total", "Requests answered by an identical request already running",
           MetricType::kCounter,
           [](const ResponseCacheStats& s) { return D(s.coalescer.followers); });
  f.Single("coalesce_handed_back_total",
           "Coalesced requests run again because the request they joined failed on its own",
           MetricType::kCounter,
           [](const ResponseCacheStats& s) { return D(s.coalescer.handed_back); });

  const HistogramBuckets& buckets = LookupBuckets();
  f.Family("lookup_duration_seconds", "Key and lookup time by outcome", MetricType::kHistogram,
           [&](const std::string& name, const ResponseCacheStats& s, std::string_view model) {
             const std::pair<std::string_view, const LatencySnapshot*> outcomes[] = {
                 {"memory_hit", &s.lookup_memory_hit},
                 {"redis_hit", &s.lookup_redis_hit},
                 {"miss", &s.lookup_miss}};
             for (const auto& [outcome, latency] : outcomes) {
               HistogramSnapshot snapshot;
               snapshot.counts = latency->counts;
               snapshot.counts.resize(buckets.size() + 1, 0);
               snapshot.sum = latency->sum_ns;
               const LabelPair labels[] = {{"model", model}, {"outcome", outcome}};
               out->HistogramSamples(name, labels, buckets, snapshot);
             }
           });
}

void AppendRedisFamilies(const RedisTierStats& redis, PrometheusTextWriter* out) {
  auto single = [out](std::string_view suffix, std::string_view help, MetricType type,
                      double value) {
    const std::string name = Name(suffix);
    out->Family(name, help, type);
    out->Sample(name, {}, value);
  };
  auto labeled = [out](std::string_view suffix, std::string_view help, MetricType type,
                       std::string_view label,
                       std::initializer_list<std::pair<std::string_view, double>> values) {
    const std::string name = Name(suffix);
    out->Family(name, help, type);
    for (const auto& [value_label, value] : values) {
      const LabelPair labels[] = {{label, value_label}};
      out->Sample(name, labels, value);
    }
  };
  const RedisClientStats& data = redis.data;
  single("redis_up", "1 while a Redis command connection is connected", MetricType::kGauge,
         data.connections_ready > 0 ? 1.0 : 0.0);
  const CircuitBreaker::State state = data.breaker_state;
  labeled("redis_breaker_state", "The Redis circuit breaker's current state (1 = current)",
          MetricType::kGauge, "state",
          {{"closed", state == CircuitBreaker::State::kClosed ? 1.0 : 0.0},
           {"open", state == CircuitBreaker::State::kOpen ? 1.0 : 0.0},
           {"half_open", state == CircuitBreaker::State::kHalfOpen ? 1.0 : 0.0}});
  single("redis_breaker_opens_total", "Times the Redis circuit breaker opened",
         MetricType::kCounter, D(data.breaker_opens));
  labeled("redis_commands_total", "Redis data commands by outcome", MetricType::kCounter, "result",
          {{"reply", D(data.replies)},
           {"timeout", D(data.timeouts)},
           {"unavailable", D(data.unavailable)},
           {"rejected_open", D(data.rejected_open)}});
  single("redis_reconnects_total", "Successful Redis (re)connects of the command connections",
         MetricType::kCounter, D(data.connects));
  single("redis_disconnects_total", "Redis command connections lost", MetricType::kCounter,
         D(data.disconnects));
  labeled("redis_rejected_values_total", "Redis values found but not used, by reason",
          MetricType::kCounter, "reason",
          {{"corrupt", D(redis.corrupt)},
           {"mismatched", D(redis.mismatched)},
           {"expired", D(redis.expired)}});
  labeled("redis_invalidations_total", "Invalidation broadcasts over Redis pub/sub",
          MetricType::kCounter, "direction",
          {{"sent", D(redis.invalidations_sent)}, {"received", D(redis.invalidations_received)}});
  single("redis_invalidation_errors_total", "Invalidations that could not reach Redis",
         MetricType::kCounter, D(redis.invalidation_errors));
  single("redis_resyncs_total",
         "Memory tiers cleared after the invalidation subscriber (re)connected",
         MetricType::kCounter, D(redis.resyncs));
  single("redis_keys_deleted_total", "Redis keys deleted by invalidations", MetricType::kCounter,
         D(redis.keys_deleted));
}

}  // namespace

void AppendCacheMetrics(std::span<const ResponseCacheStats> caches,
                        const std::optional<RedisTierStats>& redis, std::string* out) {
  PrometheusTextWriter writer(out);
  if (!caches.empty()) AppendModelFamilies(caches, &writer);
  if (redis.has_value()) AppendRedisFamilies(*redis, &writer);
}

}  // namespace brigade::cache
