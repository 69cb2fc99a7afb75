#include "telemetry/histogram.h"

#include <cmath>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::telemetry {
namespace {

HistogramBuckets Buckets(std::vector<int64_t> bounds) {
  return *HistogramBuckets::Create(std::move(bounds));
}

TEST(HistogramBucketsTest, RejectsEmptyUnorderedOrBadDivisor) {
  EXPECT_FALSE(HistogramBuckets::Create({}).ok());
  EXPECT_FALSE(HistogramBuckets::Create({1, 1}).ok());
  EXPECT_FALSE(HistogramBuckets::Create({2, 1}).ok());
  EXPECT_FALSE(HistogramBuckets::Create({1, 2}, 0).ok());
  EXPECT_TRUE(HistogramBuckets::Create({1, 2}, 1000).ok());
}

TEST(HistogramBucketsTest, UpperBoundsAreInclusiveLikePrometheusLe) {
  const HistogramBuckets buckets = Buckets({10, 20});
  EXPECT_EQ(buckets.Index(0), 0u);
  EXPECT_EQ(buckets.Index(10), 0u);
  EXPECT_EQ(buckets.Index(11), 1u);
  EXPECT_EQ(buckets.Index(20), 1u);
  EXPECT_EQ(buckets.Index(21), 2u);  // +Inf
}

TEST(HistogramBucketsTest, LatencyBucketsSpanAHundredNanosecondsToTenSecondsInSeconds) {
  const HistogramBuckets& buckets = HistogramBuckets::LatencyNs();
  EXPECT_EQ(buckets.size(), 25u);
  EXPECT_EQ(buckets.upper_bounds().front(), 100);
  EXPECT_EQ(buckets.upper_bounds().back(), 10'000'000'000);
  EXPECT_EQ(buckets.Expose(2'000'000.0), 0.002);
  EXPECT_THAT(
      std::vector<int64_t>(buckets.upper_bounds().begin(), buckets.upper_bounds().begin() + 4),
      testing::ElementsAre(100, 200, 500, 1'000));
}

TEST(HistogramTest, CountsSumAndBucketsMatchObservations) {
  Histogram histogram(std::make_shared<const HistogramBuckets>(Buckets({10, 20, 40})));
  for (int64_t v : {1, 10, 15, 30, 100, -5}) histogram.Observe(v);
  const HistogramSnapshot snap = histogram.Snapshot();
  EXPECT_THAT(snap.counts, testing::ElementsAre(3, 1, 1, 1));  // -5 counts as 0
  EXPECT_EQ(snap.count(), 6u);
  EXPECT_EQ(snap.sum, 1u + 10 + 15 + 30 + 100);
}

TEST(HistogramTest, ConcurrentObservationsAreAllCounted) {
  Histogram histogram(std::make_shared<const HistogramBuckets>(Buckets({10, 20})));
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20000; ++i) histogram.Observe(i % 30);
    });
  }
  for (auto& thread : threads) thread.join();
  const HistogramSnapshot snap = histogram.Snapshot();
  EXPECT_EQ(snap.count(), 160000u);
  uint64_t expected_sum = 0;
  for (int i = 0; i < 20000; ++i) expected_sum += static_cast<uint64_t>(i % 30);
  EXPECT_EQ(snap.sum, expected_sum * 8);
}

TEST(EstimateQuantileTest, InterpolatesInsideTheBucketHoldingTheRank) {
  const HistogramBuckets buckets = Buckets({100, 200, 400});
  HistogramSnapshot snap{.counts = {10, 10, 0, 0}};
  // rank 5 of 20 falls half-way into [0, 100].
  EXPECT_DOUBLE_EQ(EstimateQuantile(buckets, snap, 0.25), 50.0);
  // rank 10 is the top of the first bucket.
  EXPECT_DOUBLE_EQ(EstimateQuantile(buckets, snap, 0.5), 100.0);
  // rank 18 is 8/10 into (100, 200].
  EXPECT_DOUBLE_EQ(EstimateQuantile(buckets, snap, 0.9), 180.0);
}

TEST(EstimateQuantileTest, SkipsEmptyBucketsAndCapsInfAtTheLastBound) {
  const HistogramBuckets buckets = Buckets({100, 200, 400});
  HistogramSnapshot snap{.counts = {0, 0, 4, 0}};
  EXPECT_DOUBLE_EQ(EstimateQuantile(buckets, snap, 0.5), 300.0);
  snap.counts = {1, 0, 0, 9};
  EXPECT_DOUBLE_EQ(EstimateQuantile(buckets, snap, 0.99), 400.0);
}

TEST(EstimateQuantileTest, EmptyOrMismatchedSnapshotIsNaN) {
  const HistogramBuckets buckets = Buckets({100});
  EXPECT_TRUE(std::isnan(EstimateQuantile(buckets, HistogramSnapshot{.counts = {0, 0}}, 0.5)));
  EXPECT_TRUE(std::isnan(EstimateQuantile(buckets, HistogramSnapshot{.counts = {1}}, 0.5)));
}

TEST(HistogramSnapshotTest, MergeAddsBucketwise) {
  HistogramSnapshot a;
  a.Merge(HistogramSnapshot{.counts = {1, 2}, .sum = 5});
  a.Merge(HistogramSnapshot{.counts = {3, 4}, .sum = 7});
  EXPECT_THAT(a.counts, testing::ElementsAre(4, 6));
  EXPECT_EQ(a.sum, 12u);
}

}  // namespace
}  // namespace brigade::telemetry
