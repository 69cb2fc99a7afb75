#include "optimize/calibration.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace brigade::optimize {
namespace {

std::vector<float> GaussianWithOutlier(int n, float outlier) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> values(static_cast<size_t>(n));
  for (float& v : values) v = normal(rng);
  values[0] = outlier;
  return values;
}

TEST(RangeCollectorTest, MinMaxCoversEveryBatch) {
  RangeCollector c;
  const float a[] = {-1, 0.5f};
  const float b[] = {3, 0};
  c.Add(a);
  c.Add(b);
  const TensorRange r = c.Range(CalibrationMethod::kMinMax, 0);
  EXPECT_FLOAT_EQ(r.min, -1);
  EXPECT_FLOAT_EQ(r.max, 3);
  EXPECT_EQ(c.count(), 4);
}

TEST(RangeCollectorTest, HistogramGrowsWithoutLosingCounts) {
  RangeCollector c;
  const float small[] = {0.1f, 0.2f, 0.3f};
  const float large[] = {100.0f};
  c.Add(small);
  c.Add(large);
  double total = 0;
  for (double h : c.histogram()) total += h;
  EXPECT_EQ(total, 4);
  EXPECT_GE(c.histogram_max(), 100.0f);
}

TEST(RangeCollectorTest, PercentileAndEntropyClipAnOutlier) {
  RangeCollector c;
  const std::vector<float> values = GaussianWithOutlier(100000, 60.0f);
  c.Add(values);
  const TensorRange minmax = c.Range(CalibrationMethod::kMinMax, 0);
  const TensorRange percentile = c.Range(CalibrationMethod::kPercentile, 99.99);
  const TensorRange entropy = c.Range(CalibrationMethod::kEntropy, 0);
  EXPECT_FLOAT_EQ(minmax.max, 60.0f);
  // 99.99% of |N(0, 1)| lies below ~3.9.
  EXPECT_GT(percentile.max, 3.0f);
  EXPECT_LT(percentile.max, 5.0f);
  EXPECT_LT(entropy.max, 20.0f);
  EXPECT_GT(entropy.max, 1.5f);
  EXPECT_LT(entropy.min, -1.5f);
}

// After a Relu half the values are exactly 0: they are exact on the uint8 grid and must not pull
// the threshold down (it fell to ~1.8 when they were counted, clipping ~4% of the positive
// values); the tensor is never negative, so the threshold is for 256 levels over [0, t].
TEST(RangeCollectorTest, EntropyIgnoresTheZerosOfARelu) {
  RangeCollector c;
  std::vector<float> values = GaussianWithOutlier(100000, 0.0f);
  int64_t zeros = 0;
  for (float& v : values) {
    v = std::max(v, 0.0f);
    zeros += v == 0.0f ? 1 : 0;
  }
  c.Add(values);
  EXPECT_EQ(c.zeros(), zeros);
  const TensorRange minmax = c.Range(CalibrationMethod::kMinMax, 0);
  const TensorRange entropy = c.Range(CalibrationMethod::kEntropy, 0);
  EXPECT_FLOAT_EQ(entropy.min, 0.0f);
  // max(N(0, 1), 0) over 100,000 values: the largest is ~4.3; 99.9% lie below ~3.1.
  EXPECT_GT(entropy.max, 3.5f);
  EXPECT_LE(entropy.max, minmax.max);
}

TEST(EntropyThresholdTest, KeepsAUniformHistogramWhole) {
  std::vector<double> uniform(1024, 10.0);
  const float t = EntropyThreshold(uniform, 1.0f);
  EXPECT_GT(t, 1000.0f);
}

}  // namespace
}  // namespace brigade::optimize
