#include "core/clock.h"

#include "core/deadline.h"
#include "core/stage_clock.h"
#include "gtest/gtest.h"

namespace brigade {
namespace {

TEST(ClockTest, RealClockIsMonotonic) {
  const Clock* clock = Clock::Real();
  int64_t last = clock->NowNs();
  for (int i = 0; i < 1000; ++i) {
    const int64_t now = clock->NowNs();
    EXPECT_GE(now, last);
    last = now;
  }
}

TEST(ClockTest, FakeClockMovesOnlyWhenAdvanced) {
  FakeClock clock(100);
  EXPECT_EQ(clock.NowNs(), 100);
  clock.AdvanceUs(2);
  EXPECT_EQ(clock.NowNs(), 2100);
}

TEST(DeadlineTest, TimeoutInMicrosecondsFromNow) {
  const Deadline deadline = Deadline::AfterUs(1000, 5);
  EXPECT_EQ(deadline.ns(), 6000);
  EXPECT_FALSE(deadline.ExpiredAt(5999));
  EXPECT_TRUE(deadline.ExpiredAt(6000));
  EXPECT_EQ(deadline.RemainingNs(5000), 1000);
}

TEST(DeadlineTest, NonPositiveTimeoutMeansNone) {
  EXPECT_TRUE(Deadline::AfterUs(1000, 0).infinite());
  EXPECT_TRUE(Deadline::AfterUs(1000, -3).infinite());
  EXPECT_TRUE(Deadline::AfterUs(1000, INT64_MAX).infinite());
  EXPECT_FALSE(Deadline().ExpiredAt(INT64_MAX - 1));
}

TEST(DeadlineTest, EarliestWins) {
  EXPECT_EQ(Deadline::Earliest(Deadline::AtNs(5), Deadline::Infinite()).ns(), 5);
  EXPECT_EQ(Deadline::Earliest(Deadline::AtNs(5), Deadline::AtNs(3)).ns(), 3);
}

TEST(StageClockTest, DurationsIgnoreUnsetOrReversedStamps) {
  StageClock clock;
  clock.Mark(Stage::kArrival, 100);
  EXPECT_EQ(clock.BetweenNs(Stage::kArrival, Stage::kSent), 0);
  clock.Mark(Stage::kSent, 350);
  EXPECT_EQ(clock.BetweenNs(Stage::kArrival, Stage::kSent), 250);
  EXPECT_EQ(clock.BetweenNs(Stage::kSent, Stage::kArrival), 0);
  clock.MarkOnce(Stage::kArrival, 1);
  EXPECT_EQ(clock.at(Stage::kArrival), 100);
  EXPECT_EQ(StageName(Stage::kInferStart), "infer_start");
  EXPECT_EQ(StageName(Stage::kDecoded), "decoded");
}

}  // namespace
}  // namespace brigade
