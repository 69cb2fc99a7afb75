#include "tools/analyze/machine_load.h"

#include <cmath>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::analyze {
namespace {

using ::testing::HasSubstr;

TEST(ParseCpuTicksTest, SumsBusyFieldsAndLeavesOutIdleIowaitAndGuest) {
  // user nice system idle iowait irq softirq steal guest guest_nice
  constexpr char kStat[] =
      "cpu  100 2 30 5000 40 5 6 7 90 9\n"
      "cpu0 50 1 15 2500 20 2 3 3 45 4\n"
      "intr 123\n";
  absl::StatusOr<CpuTicks> ticks = ParseCpuTicks(kStat);
  ASSERT_TRUE(ticks.ok()) << ticks.status();
  EXPECT_EQ(ticks->busy, 100u + 2 + 30 + 5 + 6 + 7);
  EXPECT_EQ(ticks->steal, 7u);
}

TEST(ParseCpuTicksTest, RefusesTextWithoutAFullCpuLine) {
  EXPECT_FALSE(ParseCpuTicks("").ok());
  EXPECT_FALSE(ParseCpuTicks("cpu0 1 2 3 4 5 6 7 8\n").ok());
  absl::StatusOr<CpuTicks> short_line = ParseCpuTicks("cpu  1 2 3 4\n");
  ASSERT_FALSE(short_line.ok());
  EXPECT_THAT(short_line.status().message(), HasSubstr("4 fields"));
  EXPECT_FALSE(ParseCpuTicks("cpu  1 2 x 4 5 6 7 8\n").ok());
}

TEST(OtherCoresBusyTest, SubtractsOwnTimeAndDividesByWallTime) {
  const CpuSample before{.wall_s = 100, .machine_busy_s = 1000, .own_s = 10};
  // 10 s: the machine was busy 15 CPU-seconds, 6 of them ours → 0.9 cores of other work.
  const CpuSample after{.wall_s = 110, .machine_busy_s = 1015, .own_s = 16};
  EXPECT_NEAR(OtherCoresBusy(before, after), 0.9, 1e-12);
}

TEST(OtherCoresBusyTest, NeverNegativeAndZeroWithoutElapsedTime) {
  const CpuSample before{.wall_s = 100, .machine_busy_s = 1000, .own_s = 10};
  // Tick rounding can make our own time exceed the machine's: clamped to 0.
  EXPECT_EQ(OtherCoresBusy(before, {.wall_s = 101, .machine_busy_s = 1001, .own_s = 11.5}), 0);
  EXPECT_EQ(OtherCoresBusy(before, before), 0);
}

TEST(SampleCpuTest, ReadsThisMachinesCounters) {
  absl::StatusOr<CpuSample> sample = SampleCpu();
  ASSERT_TRUE(sample.ok()) << sample.status();
  EXPECT_GT(sample->machine_busy_s, 0);
  EXPECT_GE(sample->own_s, 0);
  EXPECT_GT(sample->wall_s, 0);
  EXPECT_GE(sample->stolen_s, 0);
  EXPECT_LE(sample->stolen_s, sample->machine_busy_s);
}

}  // namespace
}  // namespace brigade::analyze
