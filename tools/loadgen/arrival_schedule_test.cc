#include "tools/loadgen/arrival_schedule.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace brigade::loadgen {
namespace {

TEST(ArrivalScheduleTest, ConstantRateSpacesRequestsEvenlyWithoutDrift) {
  ArrivalSchedule schedule(ArrivalKind::kConstant, 3000.0, 1);
  for (int64_t i = 0; i < 30'000; ++i) {
    const ArrivalSchedule::Slot slot = schedule.Next();
    ASSERT_EQ(slot.index, i);
    ASSERT_EQ(slot.offset_ns, std::llround(i * (1e9 / 3000.0)));
  }
}

TEST(ArrivalScheduleTest, PoissonIsReproducibleForASeed) {
  ArrivalSchedule a(ArrivalKind::kPoisson, 500.0, 42);
  ArrivalSchedule b(ArrivalKind::kPoisson, 500.0, 42);
  ArrivalSchedule c(ArrivalKind::kPoisson, 500.0, 43);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    const int64_t offset = a.Next().offset_ns;
    EXPECT_EQ(offset, b.Next().offset_ns);
    differs |= offset != c.Next().offset_ns;
  }
  EXPECT_TRUE(differs);
}

TEST(ArrivalScheduleTest, PoissonGapsAreExponentialWithTheRequestedMean) {
  constexpr double kRate = 2000.0;
  constexpr int kCount = 200'000;
  ArrivalSchedule schedule(ArrivalKind::kPoisson, kRate, 7);
  int64_t previous = schedule.Next().offset_ns;
  EXPECT_EQ(previous, 0);
  double sum = 0;
  int below_mean = 0;
  const double mean_gap_ns = 1e9 / kRate;
  for (int i = 1; i < kCount; ++i) {
    const int64_t offset = schedule.Next().offset_ns;
    ASSERT_GE(offset, previous);
    const double gap = static_cast<double>(offset - previous);
    sum += gap;
    below_mean += gap < mean_gap_ns;
    previous = offset;
  }
  EXPECT_NEAR(sum / (kCount - 1), mean_gap_ns, mean_gap_ns * 0.01);
  // P(gap < mean) = 1 - 1/e for an exponential distribution.
  EXPECT_NEAR(static_cast<double>(below_mean) / (kCount - 1), 1 - std::exp(-1.0), 0.005);
}

}  // namespace
}  // namespace brigade::loadgen
