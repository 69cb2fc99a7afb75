#include "tools/loadgen/latency_histogram.h"

#include <cmath>

#include "gtest/gtest.h"

namespace brigade::loadgen {
namespace {

constexpr double kRelativePrecision = 1.0 / (1 << LatencyHistogram::kSubBucketBits);

TEST(LatencyHistogramTest, EmptyHistogramReportsZero) {
  LatencyHistogram histogram;
  EXPECT_EQ(histogram.count(), 0);
  EXPECT_EQ(histogram.PercentileNs(50), 0);
  EXPECT_EQ(histogram.mean_ns(), 0);
}

TEST(LatencyHistogramTest, SmallValuesAreExactAndUseNearestRank) {
  LatencyHistogram histogram;
  for (int v = 1; v <= 100; ++v) histogram.Record(v);
  EXPECT_EQ(histogram.PercentileNs(50), 50);
  EXPECT_EQ(histogram.PercentileNs(99), 99);
  EXPECT_EQ(histogram.PercentileNs(99.9), 100);
  EXPECT_EQ(histogram.PercentileNs(0), 1);
  EXPECT_EQ(histogram.PercentileNs(100), 100);
  EXPECT_DOUBLE_EQ(histogram.mean_ns(), 50.5);
}

TEST(LatencyHistogramTest, LargeValuesAreWithinTheStatedPrecision) {
  LatencyHistogram histogram;
  // 1 µs .. 100 ms in 1 µs steps.
  for (int64_t v = 1; v <= 100'000; ++v) histogram.Record(v * 1000);
  for (double p : {10.0, 50.0, 90.0, 99.0, 99.9}) {
    const double exact = std::ceil(p / 100 * 100'000) * 1000;
    const double reported = static_cast<double>(histogram.PercentileNs(p));
    EXPECT_NEAR(reported, exact, exact * kRelativePrecision) << "p" << p;
  }
  EXPECT_EQ(histogram.min_ns(), 1000);
  EXPECT_EQ(histogram.max_ns(), 100'000'000);
}

TEST(LatencyHistogramTest, PercentileNeverLeavesTheRecordedRange) {
  LatencyHistogram histogram;
  histogram.Record(1'000'003);
  EXPECT_EQ(histogram.PercentileNs(50), 1'000'003);
}

TEST(LatencyHistogramTest, MergeEqualsRecordingEverythingInOne) {
  LatencyHistogram a;
  LatencyHistogram b;
  LatencyHistogram all;
  for (int64_t v = 0; v < 5000; ++v) {
    const int64_t value = (v * 7919) % 3'000'000;
    (v % 3 == 0 ? a : b).Record(value);
    all.Record(value);
  }
  a.Merge(b);
  EXPECT_EQ(a.count(), all.count());
  EXPECT_EQ(a.min_ns(), all.min_ns());
  EXPECT_EQ(a.max_ns(), all.max_ns());
  EXPECT_DOUBLE_EQ(a.mean_ns(), all.mean_ns());
  for (double p : {1.0, 50.0, 99.0, 99.9}) EXPECT_EQ(a.PercentileNs(p), all.PercentileNs(p));
}

TEST(LatencyHistogramTest, OutOfRangeValuesAreClamped) {
  LatencyHistogram histogram;
  histogram.Record(-5);
  histogram.Record(int64_t{1} << 50);
  EXPECT_EQ(histogram.min_ns(), 0);
  EXPECT_EQ(histogram.max_ns(), LatencyHistogram::kMaxValueNs);
  histogram.Reset();
  EXPECT_EQ(histogram.count(), 0);
}

}  // namespace
}  // namespace brigade::loadgen
