#include "telemetry/model_stats.h"

#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace brigade::telemetry {
namespace {

TEST(ModelStatsTest, ExecutionsChargeEveryRequestInTheBatch) {
  ModelStats stats("m", "1", 8);
  stats.RecordExecution(/*batch_size=*/4, /*requests=*/3, 10, 100, 5);
  const protocol::ModelStatistics snap = stats.Snapshot();
  EXPECT_EQ(snap.inference_count, 4u);
  EXPECT_EQ(snap.execution_count, 1u);
  EXPECT_EQ(snap.inference_stats.compute_infer.count, 3u);
  EXPECT_EQ(snap.inference_stats.compute_infer.ns, 300u);
  ASSERT_EQ(snap.batch_stats.size(), 1u);
  EXPECT_EQ(snap.batch_stats[0].batch_size, 4u);
  EXPECT_EQ(snap.batch_stats[0].compute_infer.count, 1u);
  EXPECT_EQ(snap.batch_stats[0].compute_infer.ns, 100u);
  EXPECT_GT(snap.last_inference_ms, 0u);
}

TEST(ModelStatsTest, CacheHitsCountAsSuccessButNotInference) {
  ModelStats stats("m", "1", 0);
  stats.RecordCacheHit(50);
  stats.RecordSuccess(70);
  const protocol::ModelStatistics snap = stats.Snapshot();
  EXPECT_EQ(snap.inference_stats.cache_hit.count, 1u);
  EXPECT_EQ(snap.inference_stats.success.count, 1u);
  EXPECT_EQ(snap.inference_count, 0u);
  EXPECT_TRUE(snap.batch_stats.empty());
}

TEST(ModelStatsTest, FailuresAreCountedInTotalAndByReason) {
  ModelStats stats("m", "1", 0);
  stats.RecordFailure(protocol::FailureReason::kRejected, 10);
  stats.RecordFailure(protocol::FailureReason::kRejected, 20);
  stats.RecordFailure(protocol::FailureReason::kBackend, 30);
  stats.RecordFailure(protocol::FailureReason::kCanceled, 40);
  const protocol::ModelStatistics snap = stats.Snapshot();
  EXPECT_EQ(snap.inference_stats.fail.count, 4u);
  EXPECT_EQ(snap.inference_stats.fail.ns, 100u);
  EXPECT_EQ(snap.fail_by_reason[static_cast<size_t>(protocol::FailureReason::kRejected)], 2u);
  EXPECT_EQ(snap.fail_by_reason[static_cast<size_t>(protocol::FailureReason::kCanceled)], 1u);
  EXPECT_EQ(snap.fail_by_reason[static_cast<size_t>(protocol::FailureReason::kBackend)], 1u);
  EXPECT_EQ(snap.fail_by_reason[static_cast<size_t>(protocol::FailureReason::kOther)], 0u);
  EXPECT_EQ(snap.inference_stats.success.count, 0u);
}

TEST(ModelStatsTest, BatchSizesBeyondTheTableAreClamped) {
  ModelStats stats("m", "1", 2);
  stats.RecordExecution(9, 1, 1, 1, 1);
  EXPECT_EQ(stats.Snapshot().batch_stats.back().batch_size, 2u);
}

TEST(ModelStatsTest, ConcurrentRecordsAreAllCounted) {
  ModelStats stats("m", "1", 4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) stats.RecordSuccess(1);
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(stats.Snapshot().inference_stats.success.count, 40000u);
  EXPECT_EQ(stats.Snapshot().inference_stats.success.ns, 40000u);
}

}  // namespace
}  // namespace brigade::telemetry
