#include "cache/cache_metrics.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/promtool.h"

namespace brigade::cache {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

ResponseCacheStats SampleStats(std::string model) {
  ResponseCacheStats stats;
  stats.model = std::move(model);
  stats.tier = Tier::kBoth;
  stats.lookups = 10;
  stats.hits = 7;
  stats.misses = 3;
  stats.hit_rate = 0.7;
  stats.bypassed = 2;
  stats.refreshed = 1;
  stats.stores = 3;
  stats.memory.hits = 5;
  stats.memory.evictions = 4;
  stats.memory.expirations = 6;
  stats.memory.bytes_used = 4096;
  stats.memory.entries = 2;
  stats.memory.max_bytes = 1 << 20;
  stats.redis.hits = 2;
  stats.redis.errors = 1;
  stats.redis.store_errors = 1;
  stats.coalescer.followers = 8;
  LatencyHistogram memory_hits;
  memory_hits.Record(3'000);   // 3 µs
  memory_hits.Record(40'000);  // 40 µs
  stats.lookup_memory_hit = memory_hits.Snapshot();
  LatencyHistogram redis_hits;
  redis_hits.Record(250'000);
  stats.lookup_redis_hit = redis_hits.Snapshot();
  stats.lookup_miss = LatencyHistogram().Snapshot();
  return stats;
}

RedisTierStats SampleRedis() {
  RedisTierStats redis;
  redis.data.connections_ready = 2;
  redis.data.breaker_state = CircuitBreaker::State::kOpen;
  redis.data.breaker_opens = 3;
  redis.data.replies = 100;
  redis.data.timeouts = 5;
  redis.data.rejected_open = 9;
  redis.mismatched = 1;
  redis.invalidations_sent = 4;
  redis.invalidations_received = 6;
  return redis;
}

TEST(CacheMetricsTest, PerModelFamiliesCarryTheCountersByTier) {
  const std::vector<ResponseCacheStats> caches = {SampleStats("m")};
  std::string text;
  AppendCacheMetrics(caches, std::nullopt, &text);
  EXPECT_THAT(text, HasSubstr("# TYPE brigade_response_cache_hits_total counter\n"));
  EXPECT_THAT(text, HasSubstr("brigade_response_cache_lookups_total{model=\"m\"} 10\n"));
  EXPECT_THAT(text,
              HasSubstr("brigade_response_cache_hits_total{model=\"m\",tier=\"memory\"} 5\n"));
  EXPECT_THAT(text, HasSubstr("brigade_response_cache_hits_total{model=\"m\",tier=\"redis\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("brigade_response_cache_misses_total{model=\"m\"} 3\n"));
  EXPECT_THAT(text, HasSubstr("brigade_response_cache_hit_ratio{model=\"m\"} 0.7\n"));
  EXPECT_THAT(
      text, HasSubstr("brigade_response_cache_control_total{model=\"m\",control=\"bypass\"} 2\n"));
  EXPECT_THAT(text,
              HasSubstr("brigade_response_cache_evictions_total{model=\"m\",tier=\"memory\"} 4\n"));
  EXPECT_THAT(
      text, HasSubstr("brigade_response_cache_expirations_total{model=\"m\",tier=\"memory\"} 6\n"));
  EXPECT_THAT(text, HasSubstr("brigade_response_cache_memory_bytes{model=\"m\"} 4096\n"));
  EXPECT_THAT(text, HasSubstr("brigade_response_cache_coalesced_total{model=\"m\"} 8\n"));
  EXPECT_THAT(text, HasSubstr("brigade_response_cache_redis_errors_total{model=\"m\"} 1\n"));
  // The lookup histogram in seconds: 3 µs falls at or below le=5e-06, 40 µs does not.
  EXPECT_THAT(text, HasSubstr("brigade_response_cache_lookup_duration_seconds_bucket{model=\"m\","
                              "outcome=\"memory_hit\",le=\"5e-06\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("brigade_response_cache_lookup_duration_seconds_count{model=\"m\","
                              "outcome=\"memory_hit\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("brigade_response_cache_lookup_duration_seconds_count{model=\"m\","
                              "outcome=\"redis_hit\"} 1\n"));
  EXPECT_THAT(text, Not(HasSubstr("redis_up")));
}

TEST(CacheMetricsTest, RedisFamiliesDescribeTheSharedTier) {
  std::string text;
  AppendCacheMetrics({}, SampleRedis(), &text);
  EXPECT_THAT(text, HasSubstr("brigade_response_cache_redis_up 1\n"));
  EXPECT_THAT(text, HasSubstr("brigade_response_cache_redis_breaker_state{state=\"open\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("brigade_response_cache_redis_breaker_state{state=\"closed\"} 0\n"));
  EXPECT_THAT(text,
              HasSubstr("brigade_response_cache_redis_commands_total{result=\"timeout\"} 5\n"));
  EXPECT_THAT(
      text, HasSubstr("brigade_response_cache_redis_commands_total{result=\"rejected_open\"} 9\n"));
  EXPECT_THAT(text,
              HasSubstr("brigade_response_cache_redis_rejected_values_total{reason=\"mismatched\"} "
                        "1\n"));
  EXPECT_THAT(text,
              HasSubstr("brigade_response_cache_redis_invalidations_total{direction=\"received\"} "
                        "6\n"));
  EXPECT_THAT(text, Not(HasSubstr("lookups_total")));
}

TEST(CacheMetricsTest, NothingCachedWritesNothing) {
  std::string text;
  AppendCacheMetrics({}, std::nullopt, &text);
  EXPECT_EQ(text, "");
}

TEST(CacheMetricsTest, OutputPassesPromtoolWithoutLints) {
  if (!testing::PromtoolInstalled()) GTEST_SKIP() << "promtool not installed";
  const std::vector<ResponseCacheStats> caches = {SampleStats("a"), SampleStats("we\"ird\\b")};
  std::string text;
  AppendCacheMetrics(caches, SampleRedis(), &text);
  absl::StatusOr<testing::PromtoolResult> result = testing::CheckMetrics(text);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->exit_code, 0) << result->findings << "\n" << text;
  EXPECT_EQ(result->findings, "") << text;
}

}  // namespace
}  // namespace brigade::cache
