#include "cache/circuit_breaker.h"

#include "gtest/gtest.h"

namespace brigade::cache {
namespace {

using State = CircuitBreaker::State;

TEST(CircuitBreakerTest, OpensAfterConsecutiveFailuresOnly) {
  FakeClock clock;
  CircuitBreaker breaker({3, 1000}, &clock);
  for (int round = 0; round < 3; ++round) {
    ASSERT_TRUE(breaker.Allow());
    breaker.RecordFailure();
    ASSERT_TRUE(breaker.Allow());
    breaker.RecordFailure();
    ASSERT_TRUE(breaker.Allow());
    breaker.RecordSuccess();  // resets the streak
  }
  EXPECT_EQ(breaker.state(), State::kClosed);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(breaker.Allow());
    breaker.RecordFailure();
  }
  EXPECT_EQ(breaker.state(), State::kOpen);
  EXPECT_FALSE(breaker.Allow());
  EXPECT_EQ(breaker.opens(), 1u);
}

TEST(CircuitBreakerTest, OpenBreakerLetsOneProbeThroughAfterTheOpenDuration) {
  FakeClock clock;
  CircuitBreaker breaker({1, 1000}, &clock);
  ASSERT_TRUE(breaker.Allow());
  breaker.RecordFailure();
  clock.AdvanceUs(999);
  EXPECT_FALSE(breaker.Allow());
  clock.AdvanceUs(1);
  EXPECT_TRUE(breaker.Allow()) << "the probe";
  EXPECT_EQ(breaker.state(), State::kHalfOpen);
  EXPECT_FALSE(breaker.Allow()) << "only one probe at a time";
  breaker.RecordSuccess();
  EXPECT_EQ(breaker.state(), State::kClosed);
  EXPECT_TRUE(breaker.Allow());
  EXPECT_TRUE(breaker.Allow());
}

TEST(CircuitBreakerTest, FailedProbeOpensItAgainForAnotherFullDuration) {
  FakeClock clock;
  CircuitBreaker breaker({1, 1000}, &clock);
  ASSERT_TRUE(breaker.Allow());
  breaker.RecordFailure();
  clock.AdvanceUs(1000);
  ASSERT_TRUE(breaker.Allow());
  breaker.RecordFailure();
  EXPECT_EQ(breaker.state(), State::kOpen);
  EXPECT_EQ(breaker.opens(), 2u);
  clock.AdvanceUs(999);
  EXPECT_FALSE(breaker.Allow());
  clock.AdvanceUs(1);
  EXPECT_TRUE(breaker.Allow());
}

TEST(CircuitBreakerTest, FirstOpeningIsShortAndFailedProbesDoubleItUpToTheLongest) {
  FakeClock clock;
  CircuitBreaker breaker(
      {.failure_threshold = 1, .open_duration_us = 1000, .first_open_duration_us = 100}, &clock);
  ASSERT_TRUE(breaker.Allow());
  breaker.RecordFailure();
  // Open for 100, 200, 400, 800, then capped at 1000 µs: each period ends in one probe, which
  // fails.
  for (int64_t period_us : {100, 200, 400, 800, 1000, 1000}) {
    clock.AdvanceUs(period_us - 1);
    EXPECT_FALSE(breaker.Allow()) << period_us;
    clock.AdvanceUs(1);
    ASSERT_TRUE(breaker.Allow()) << period_us;
    breaker.RecordFailure();
  }
  // A probe that succeeds closes it; the next opening is short again.
  clock.AdvanceUs(1000);
  ASSERT_TRUE(breaker.Allow());
  breaker.RecordSuccess();
  EXPECT_EQ(breaker.state(), State::kClosed);
  ASSERT_TRUE(breaker.Allow());
  breaker.RecordFailure();
  clock.AdvanceUs(99);
  EXPECT_FALSE(breaker.Allow());
  clock.AdvanceUs(1);
  EXPECT_TRUE(breaker.Allow());
}

TEST(CircuitBreakerTest, FirstOpenPeriodNeverExceedsTheLongest) {
  FakeClock clock;
  CircuitBreaker breaker(
      {.failure_threshold = 1, .open_duration_us = 50, .first_open_duration_us = 20'000}, &clock);
  ASSERT_TRUE(breaker.Allow());
  breaker.RecordFailure();
  clock.AdvanceUs(50);
  EXPECT_TRUE(breaker.Allow());
}

TEST(CircuitBreakerTest, LateResultsOfCallsAllowedBeforeOpeningDoNotReopenIt) {
  FakeClock clock;
  CircuitBreaker breaker({2, 1000}, &clock);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(breaker.Allow());  // four calls in flight
  breaker.RecordFailure();
  breaker.RecordFailure();  // opens
  breaker.RecordFailure();  // late: already open
  breaker.RecordFailure();
  EXPECT_EQ(breaker.opens(), 1u);
  EXPECT_EQ(BreakerStateName(breaker.state()), "open");
}

}  // namespace
}  // namespace brigade::cache
