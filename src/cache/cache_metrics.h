#ifndef BRIGADE_CACHE_CACHE_METRICS_H_
#define BRIGADE_CACHE_CACHE_METRICS_H_

// AppendCacheMetrics: the response cache's counters as Prometheus text families for GET /metrics
// from each served model's ResponseCache::Stats() and the CacheManager's RedisStats(). Prefix
// brigade_response_cache_.
//
// Brigade's only cache hit/miss families (the dashboard reads hits_total and misses_total).
// Per model (label model; per version, the statistics extension's cache_hit / cache_miss and
// Triton's nv_cache_num_{hits,misses}_per_model count hits and misses too, a refresh as a miss):
//   lookups_total                        requests that looked the cache up
//   hits_total{tier}                     answered from memory | redis
//   misses_total                         lookups that found nothing usable (Redis errors included)
//   hit_ratio                            gauge: hits / lookups since start (0 before any lookup);
//                                        below 0.5 the caching policy deserves a second look
//   control_total{control}               bypass | refresh requests (no lookup)
//   stores_total, store_errors_total{tier}
//   evictions_total{tier}, expirations_total{tier}, collisions_total{tier}
//                                        memory tier (Redis evicts and expires on its own)
//   redis_errors_total                   Redis lookups that failed (timeout, down, breaker open)
//   memory_bytes, memory_entries, memory_max_bytes   gauges
//   coalesced_total                      requests answered by an identical request in flight
//   coalesce_handed_back_total           followers re-run because their leader failed on its own
//   lookup_duration_seconds{outcome}     histogram: key + lookup, memory_hit | redis_hit | miss
// Redis tier (no model label; only when the server has one):
//   redis_up                             gauge: 1 while a command connection is connected
//   redis_breaker_state{state}           gauge: 1 for the current state closed|open|half_open
//   redis_breaker_opens_total
//   redis_commands_total{result}         reply | timeout | unavailable | rejected_open
//   redis_reconnects_total, redis_disconnects_total
//   redis_rejected_values_total{reason}  corrupt | mismatched (another request's) | expired
//   redis_invalidations_total{direction} sent | received (pub/sub)
//   redis_invalidation_errors_total, redis_resyncs_total, redis_keys_deleted_total
//
// The output passes `promtool check metrics` (cache_metrics_test.cc runs it when installed).
// Thread safety: a pure function of its arguments.

#include <optional>
#include <span>
#include <string>

#include "cache/redis_stats.h"
#include "cache/response_cache.h"

namespace brigade::cache {

// Appends the families above to `out`; nothing for the per-model families when `caches` is
// empty, nothing for the Redis ones without `redis`.
void AppendCacheMetrics(std::span<const ResponseCacheStats> caches,
                        const std::optional<RedisTierStats>& redis, std::string* out);

}  // namespace brigade::cache

#endif  // BRIGADE_CACHE_CACHE_METRICS_H_
