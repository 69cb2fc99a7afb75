#include "route/slo_controller.h"

#include <cstdint>

#include "gtest/gtest.h"

namespace brigade::route {
namespace {

constexpr int64_t kMs = 1'000'000;

SloController::Options FiveMs() {
  SloController::Options options;
  options.target_ns = 5 * kMs;
  options.min_samples = 100;
  options.window_ns = 100 * kMs;
  options.low = 0.8;
  options.gain = 0.25;
  options.max_margin_fraction = 0.5;
  return options;
}

// Feeds one window of `samples` answers of `latency_ns` each, spaced over `span_ns`, starting
// at `*now_ns`, which moves past the window.
void FeedWindow(SloController& controller, int samples, int64_t latency_ns, int64_t span_ns,
                int64_t* now_ns) {
  for (int i = 0; i < samples; ++i) {
    controller.Record(latency_ns, *now_ns);
    *now_ns += (span_ns + samples - 2) / (samples - 1);
  }
}

TEST(SloControllerTest, MarginStaysZeroUntilAWindowCloses) {
  SloController controller(FiveMs());
  // Enough samples but not the window's span.
  for (int i = 0; i < 200; ++i) controller.Record(kMs, i);
  EXPECT_EQ(controller.LastWindowP99Ns(), 0);
  // The span but too few samples.
  SloController sparse(FiveMs());
  for (int i = 0; i < 99; ++i) sparse.Record(kMs, i * 10 * kMs);
  EXPECT_EQ(sparse.LastWindowP99Ns(), 0);
  EXPECT_EQ(controller.MarginNs(), 0);
  EXPECT_EQ(sparse.MarginNs(), 0);
}

TEST(SloControllerTest, RoomBelowTheBandRaisesTheMarginSlowlyUpToItsBound) {
  SloController controller(FiveMs());
  int64_t now = 0;
  FeedWindow(controller, 100, 2 * kMs, 100 * kMs, &now);
  EXPECT_EQ(controller.LastWindowP99Ns(), 2 * kMs);
  // gain 0.25 × (0.8 × 5 ms − 2 ms) = 0.5 ms.
  EXPECT_EQ(controller.MarginNs(), kMs / 2);
  for (int w = 0; w < 20; ++w) FeedWindow(controller, 100, 2 * kMs, 100 * kMs, &now);
  // Bounded at half the target.
  EXPECT_EQ(controller.MarginNs(), 5 * kMs / 2);
}

TEST(SloControllerTest, AMissedTargetTakesTheWholeExcessBackAtOnce) {
  SloController controller(FiveMs());
  int64_t now = 0;
  for (int w = 0; w < 20; ++w) FeedWindow(controller, 100, 2 * kMs, 100 * kMs, &now);
  ASSERT_EQ(controller.MarginNs(), 5 * kMs / 2);
  FeedWindow(controller, 100, 7 * kMs, 100 * kMs, &now);
  EXPECT_EQ(controller.MarginNs(), kMs / 2);
  // Far past the target: the margin goes negative, down to minus the target.
  FeedWindow(controller, 100, 50 * kMs, 100 * kMs, &now);
  EXPECT_EQ(controller.MarginNs(), -5 * kMs);
}

TEST(SloControllerTest, InsideTheDeadBandTheMarginDoesNotMove) {
  SloController controller(FiveMs());
  int64_t now = 0;
  FeedWindow(controller, 100, 2 * kMs, 100 * kMs, &now);
  const int64_t margin = controller.MarginNs();
  ASSERT_GT(margin, 0);
  // 4 ms and 5 ms are both within [0.8, 1.0] × 5 ms.
  FeedWindow(controller, 100, 4 * kMs, 100 * kMs, &now);
  FeedWindow(controller, 100, 5 * kMs, 100 * kMs, &now);
  EXPECT_EQ(controller.MarginNs(), margin);
}

TEST(SloControllerTest, TheWindowsP99IgnoresTheSlowestPercent) {
  SloController controller(FiveMs());
  int64_t now = 0;
  // 99 fast answers and one very slow one: nearest-rank p99 of 100 is the 99th smallest.
  for (int i = 0; i < 99; ++i) controller.Record(kMs, now += 2 * kMs);
  controller.Record(1000 * kMs, now += 2 * kMs);
  EXPECT_EQ(controller.LastWindowP99Ns(), kMs);
  EXPECT_GT(controller.MarginNs(), 0);
}

TEST(SloControllerTest, AFullWindowClosesBeforeItsSpan) {
  SloController controller(FiveMs());
  for (int i = 0; i < SloController::kWindowCapacity; ++i) controller.Record(9 * kMs, i);
  EXPECT_EQ(controller.LastWindowP99Ns(), 9 * kMs);
  EXPECT_EQ(controller.MarginNs(), -4 * kMs);
}

}  // namespace
}  // namespace brigade::route
