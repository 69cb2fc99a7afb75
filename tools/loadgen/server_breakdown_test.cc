#include "tools/loadgen/server_breakdown.h"

#include "gtest/gtest.h"

namespace brigade::loadgen {
namespace {

protocol::ModelStatistics Stats(std::string version, uint64_t requests, uint64_t queue_ns,
                                uint64_t infer_ns, uint64_t executions, std::string name = "m") {
  protocol::ModelStatistics stats;
  stats.name = std::move(name);
  stats.version = std::move(version);
  stats.inference_count = requests;
  stats.execution_count = executions;
  stats.inference_stats.success = {requests, requests * 1000};
  stats.inference_stats.queue = {requests, queue_ns};
  stats.inference_stats.compute_input = {requests, requests * 10};
  stats.inference_stats.compute_infer = {requests, infer_ns};
  stats.inference_stats.compute_output = {requests, requests * 20};
  return stats;
}

TEST(ServerBreakdownTest, MeansPerRequestComeFromTheWindowsDeltas) {
  const protocol::ModelStatistics before = Stats("1", 100, 5'000, 100'000, 100);
  const protocol::ModelStatistics after = Stats("1", 300, 25'000, 700'000, 150);
  std::optional<ServerBreakdown> breakdown = ComputeBreakdown(before, after);
  ASSERT_TRUE(breakdown.has_value());
  EXPECT_EQ(breakdown->requests, 200u);
  EXPECT_DOUBLE_EQ(breakdown->queue_ns, 100.0);
  EXPECT_DOUBLE_EQ(breakdown->compute_infer_ns, 3000.0);
  EXPECT_DOUBLE_EQ(breakdown->compute_input_ns, 10.0);
  EXPECT_DOUBLE_EQ(breakdown->compute_output_ns, 20.0);
  EXPECT_DOUBLE_EQ(breakdown->compute_ns(), 3030.0);
  EXPECT_DOUBLE_EQ(breakdown->request_ns, 1000.0);
  EXPECT_EQ(breakdown->executions, 50u);
  EXPECT_DOUBLE_EQ(breakdown->mean_batch_size, 4.0);
}

TEST(ServerBreakdownTest, CacheHitRateComesFromTheWindowsHitAndMissCounts) {
  protocol::ModelStatistics before = Stats("1", 100, 0, 0, 100);
  protocol::ModelStatistics after = Stats("1", 500, 0, 0, 200);
  before.inference_stats.cache_hit = {40, 4'000};
  before.inference_stats.cache_miss = {60, 6'000};
  after.inference_stats.cache_hit = {340, 34'000};
  after.inference_stats.cache_miss = {160, 16'000};
  std::optional<ServerBreakdown> breakdown = ComputeBreakdown(before, after);
  ASSERT_TRUE(breakdown.has_value());
  EXPECT_EQ(breakdown->cache_hits, 300u);
  EXPECT_EQ(breakdown->cache_misses, 100u);
  EXPECT_DOUBLE_EQ(breakdown->cache_hit_rate(), 0.75);

  // No cache: no lookups, rate 0 rather than a division by zero.
  std::optional<ServerBreakdown> uncached =
      ComputeBreakdown(Stats("1", 1, 0, 0, 1), Stats("1", 2, 0, 0, 2));
  ASSERT_TRUE(uncached.has_value());
  EXPECT_EQ(uncached->cache_lookups(), 0u);
  EXPECT_EQ(uncached->cache_hit_rate(), 0.0);

  // Cache counters going backwards (statistics reset) cannot be attributed either.
  after.inference_stats.cache_hit = {10, 1'000};
  EXPECT_FALSE(ComputeBreakdown(before, after).has_value());
}

TEST(ServerBreakdownTest, AnIdleWindowHasZeroMeans) {
  const protocol::ModelStatistics same = Stats("1", 10, 100, 100, 10);
  std::optional<ServerBreakdown> breakdown = ComputeBreakdown(same, same);
  ASSERT_TRUE(breakdown.has_value());
  EXPECT_EQ(breakdown->requests, 0u);
  EXPECT_EQ(breakdown->compute_ns(), 0.0);
  EXPECT_EQ(breakdown->mean_batch_size, 0.0);
}

TEST(ServerBreakdownTest, CountersGoingBackwardsMeanTheModelWasReloaded) {
  EXPECT_FALSE(ComputeBreakdown(Stats("1", 300, 1, 1, 3), Stats("1", 5, 1, 1, 1)).has_value());
}

TEST(ServerBreakdownTest, SumModelAddsEveryVersionOfTheNamedModelOnly) {
  std::vector<protocol::ModelStatistics> stats = {Stats("1", 10, 100, 1000, 10),
                                                  Stats("2", 30, 300, 3000, 30)};
  stats.push_back(Stats("1", 99, 99, 99, 99, "other"));
  std::optional<protocol::ModelStatistics> sum = SumModel(stats, "m");
  ASSERT_TRUE(sum.has_value());
  EXPECT_EQ(sum->inference_stats.success.count, 40u);
  EXPECT_EQ(sum->inference_stats.compute_infer.ns, 4000u);
  EXPECT_EQ(sum->execution_count, 40u);
  EXPECT_FALSE(SumModel(stats, "absent").has_value());
}

}  // namespace
}  // namespace brigade::loadgen
