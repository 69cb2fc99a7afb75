#include "scheduler/latency_profile.h"

#include <cmath>

#include "gtest/gtest.h"
#include "scheduler/load_tracker.h"

namespace brigade::scheduler {
namespace {

constexpr int64_t kNow = 1'000'000'000;
constexpr int64_t kUs = 1000;
constexpr int64_t kHalfLifeNs = 1'000'000'000;

TEST(DecayingHistogramTest, QuantilesInOnePassEqualEachQuantileAlone) {
  DecayingHistogram histogram(int64_t{10'000'000'000});
  for (int i = 1; i <= 1000; ++i) histogram.Add(int64_t{i} * i * 37 % 900'000 * kUs / 100, i);
  const double qs[] = {0.0, 0.25, 0.5, 0.9, 0.99, 1.0};
  int64_t together[6];
  histogram.Quantiles(qs, together);
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(together[i], histogram.Quantile(qs[i])) << qs[i];
  const DecayingHistogram empty(1);
  int64_t none[2] = {-1, -1};
  empty.Quantiles(std::span<const double>(qs, 2), none);
  EXPECT_EQ(none[0], 0);
  EXPECT_EQ(none[1], 0);
}

TEST(DecayingHistogramTest, QuantilesOfASpreadAreWithinABucket) {
  DecayingHistogram histogram(kHalfLifeNs);
  for (int us = 1; us <= 1000; ++us) histogram.Add(us * kUs, kNow);
  EXPECT_NEAR(histogram.Quantile(0.50), 500 * kUs, 500 * kUs * 0.15);
  EXPECT_NEAR(histogram.Quantile(0.99), 990 * kUs, 990 * kUs * 0.15);
  EXPECT_NEAR(histogram.Weight(kNow), 1000, 1e-6);
}

TEST(DecayingHistogramTest, AConstantDurationIsReportedExactly) {
  DecayingHistogram histogram(kHalfLifeNs);
  for (int i = 0; i < 50; ++i) histogram.Add(2345 * kUs, kNow);
  EXPECT_EQ(histogram.Quantile(0.5), 2345 * kUs);
  EXPECT_EQ(histogram.Quantile(0.99), 2345 * kUs);
}

TEST(DecayingHistogramTest, OldSamplesFadeWithTheHalfLife) {
  DecayingHistogram histogram(kHalfLifeNs);
  for (int i = 0; i < 100; ++i) histogram.Add(1000 * kUs, kNow);
  EXPECT_NEAR(histogram.Weight(kNow + kHalfLifeNs), 50, 1e-6);
  // Ten half-lives later the model got twice as slow: the quantiles follow the new regime.
  const int64_t later = kNow + 10 * kHalfLifeNs;
  for (int i = 0; i < 100; ++i) histogram.Add(2000 * kUs, later);
  EXPECT_EQ(histogram.Quantile(0.5), 2000 * kUs);
  EXPECT_EQ(histogram.Quantile(0.99), 2000 * kUs);
  EXPECT_EQ(DecayingHistogram(kHalfLifeNs).Quantile(0.5), 0);
}

TEST(DecayingHistogramTest, WeightAndQuantilesStayExactAcrossManyHalfLives) {
  // Samples every tenth of a half-life for 200 half-lives: the decay is folded into the counts
  // many times on the way. The weight must equal the exact sum of 2^(-age / half-life), and the
  // quantiles must weigh the recent regime as that sum does.
  DecayingHistogram histogram(kHalfLifeNs);
  double expected = 0;
  const double step = std::exp2(-0.1);
  int64_t now = kNow;
  for (int i = 0; i < 2000; ++i) {
    now += kHalfLifeNs / 10;
    expected = expected * step + 1;
    histogram.Add((i < 1990 ? 1000 : 3000) * kUs, now);
  }
  EXPECT_NEAR(histogram.Weight(now), expected, 1e-6 * expected);
  // The last ten samples (weights 2^0 .. 2^-0.9, sum ~6.9 of ~14.9) are the slow ones: more than
  // 46% of the weight, so the 0.6 quantile is slow and the 0.4 quantile is not.
  EXPECT_EQ(histogram.Quantile(0.6), 3000 * kUs);
  EXPECT_EQ(histogram.Quantile(0.4), 1000 * kUs);
}
TEST(LatencyProfileTest, PredictsFromTheBestSourceAvailable) {
  LatencyProfile profile({2, 16, kHalfLifeNs});
  EXPECT_TRUE(profile.empty());
  EXPECT_EQ(profile.Predict(0, 4).source, LatencyProfile::Source::kUnknown);

  for (int i = 0; i < 10; ++i) profile.Record(0, 4, 2000 * kUs, kNow);
  EXPECT_EQ(profile.Predict(0, 4).source, LatencyProfile::Source::kMeasured);
  EXPECT_EQ(profile.Predict(0, 4).p99_ns, 2000 * kUs);
  // Instance 1 ran nothing: the pooled cell answers.
  EXPECT_EQ(profile.Predict(1, 4).source, LatencyProfile::Source::kPooled);
  // One size known: no saving assumed below it, no amortization above it.
  EXPECT_EQ(profile.Predict(0, 2).source, LatencyProfile::Source::kScaled);
  EXPECT_EQ(profile.Predict(0, 2).p50_ns, 2000 * kUs);
  EXPECT_EQ(profile.Predict(0, 8).p50_ns, 4000 * kUs);

  for (int i = 0; i < 10; ++i) profile.Record(1, 8, 3000 * kUs, kNow);
  // Two sizes: the line through (4, 2000) and (8, 3000).
  EXPECT_EQ(profile.Predict(0, 6).source, LatencyProfile::Source::kFitted);
  EXPECT_EQ(profile.Predict(0, 6).p50_ns, 2500 * kUs);
  EXPECT_EQ(profile.Predict(0, 12).p99_ns, 4000 * kUs);
  EXPECT_EQ(profile.Predict(1, 8).source, LatencyProfile::Source::kMeasured);
  EXPECT_EQ(profile.Predict(0, 8).source, LatencyProfile::Source::kPooled);
}

TEST(LatencyProfileTest, PredictionsNeverDecreaseWithRows) {
  LatencyProfile profile({1, 8, kHalfLifeNs});
  for (int i = 0; i < 10; ++i) {
    profile.Record(0, 2, 3000 * kUs, kNow);
    profile.Record(0, 4, 2000 * kUs, kNow);  // noise: bigger but faster
  }
  for (int rows = 2; rows <= 8; ++rows) {
    EXPECT_GE(profile.Predict(0, rows).p50_ns, profile.Predict(0, rows - 1).p50_ns) << rows;
  }
}

TEST(LatencyProfileTest, PointsListPooledCellsThenInstances) {
  LatencyProfile profile({2, 4, kHalfLifeNs});
  profile.Record(1, 3, 100 * kUs, kNow);
  const auto points = profile.Points(kNow);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0].instance, -1);
  EXPECT_EQ(points[1].instance, 1);
  EXPECT_EQ(points[1].rows, 3);
  EXPECT_EQ(points[1].p50_ns, 100 * kUs);
}

TEST(RateMeterTest, ASteadyInputReadsAsItsRate) {
  RateMeter meter(200'000'000);
  int64_t now = kNow;
  for (int i = 0; i < 2000; ++i, now += 1'000'000) meter.Add(1, now);  // 1000 per second
  EXPECT_NEAR(meter.PerSecond(now), 1000, 20);
  // Silence for ten half-lives: the rate fades.
  EXPECT_LT(meter.PerSecond(now + 2'000'000'000), 1.5);
}

TEST(LoadTrackerTest, KnowsWhenTheFirstBusyInstanceFreesUp) {
  LoadTracker tracker({2, 8, kHalfLifeNs, 200'000'000});
  EXPECT_EQ(tracker.Signals(kNow).busy_instances, 0);
  EXPECT_EQ(tracker.Signals(kNow).first_free_ns, kNow);
  tracker.OnBatchStart(0, 300 * kUs, kNow);
  tracker.OnBatchStart(1, 100 * kUs, kNow);
  LoadSignals signals = tracker.Signals(kNow);
  EXPECT_EQ(signals.busy_instances, 2);
  EXPECT_EQ(signals.first_free_ns, kNow + 100 * kUs);
  // Running late: never predicted to free up in the past.
  EXPECT_EQ(tracker.Signals(kNow + 500 * kUs).first_free_ns, kNow + 500 * kUs);
  tracker.OnBatchDone(1, 4, 120 * kUs, kNow + 120 * kUs);
  signals = tracker.Signals(kNow + 120 * kUs);
  EXPECT_EQ(signals.busy_instances, 1);
  EXPECT_EQ(signals.first_free_ns, kNow + 120 * kUs);
  EXPECT_EQ(tracker.profile().Predict(1, 4).p50_ns, 120 * kUs);
}

TEST(LatencyProfileTest, ACellIsFreshWhileItsDecayedSamplesReachTheMinimum) {
  LatencyProfile profile({1, 4, kHalfLifeNs});
  for (int i = 0; i < 7; ++i) profile.Record(0, 2, 1'000'000, kNow);
  EXPECT_FALSE(profile.FreshlyMeasured(2, kNow));
  for (int i = 0; i < 9; ++i) profile.Record(0, 2, 1'000'000, kNow);
  // 16 samples: fresh for one half-life, not two.
  EXPECT_TRUE(profile.FreshlyMeasured(2, kNow + kHalfLifeNs - 1000));
  EXPECT_FALSE(profile.FreshlyMeasured(2, kNow + kHalfLifeNs + 1000));
  EXPECT_FALSE(profile.FreshlyMeasured(3, kNow));
  EXPECT_FALSE(profile.FreshlyMeasured(9, kNow));
}

TEST(LatencyProfileTest, ThePooledLineIsFittedOnceTwoSizesHaveSamples) {
  LatencyProfile profile({2, 16, kHalfLifeNs});
  EXPECT_FALSE(profile.PooledP50Line(16).has_value());
  profile.Record(0, 2, 3'000'000, kNow);
  EXPECT_FALSE(profile.PooledP50Line(16).has_value());
  profile.Record(1, 4, 5'000'000, kNow);
  ASSERT_TRUE(profile.PooledP50Line(16).has_value());
  EXPECT_NEAR(profile.PooledP50Line(16)->fixed_ns, 1'000'000, 1'000);
  EXPECT_NEAR(profile.PooledP50Line(16)->per_row_ns, 1'000'000, 1'000);
  // Only the sizes up to the limit count.
  profile.Record(0, 8, 50'000'000, kNow);
  EXPECT_NEAR(profile.PooledP50Line(4)->per_row_ns, 1'000'000, 1'000);
  EXPECT_GT(profile.PooledP50Line(8)->per_row_ns, 5'000'000);
}

}  // namespace
}  // namespace brigade::scheduler
