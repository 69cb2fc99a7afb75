// The request loops driven by a fake clock: `issue` advances time by a scripted service time and
// the waiter "sleeps" by moving the clock, so intended send times and coordinated-omission
// correction are checked exactly, without real time.

#include "tools/loadgen/load_worker.h"

#include <algorithm>
#include <functional>
#include <vector>

#include "gtest/gtest.h"
#include "tools/client/client_status.h"

namespace brigade::loadgen {
namespace {

constexpr int64_t kUs = 1'000;
constexpr int64_t kMs = 1'000'000;

class FakeWaiter final : public Waiter {
 public:
  explicit FakeWaiter(FakeClock* clock) : clock_(clock) {}
  void WaitUntilNs(int64_t deadline_ns) override {
    clock_->SetNs(std::max(clock_->NowNs(), deadline_ns));
  }

 private:
  FakeClock* clock_;
};

// A server whose i-th request takes service_ns(i); records when each request was sent.
class FakeServer {
 public:
  FakeServer(FakeClock* clock, std::function<int64_t(int)> service_ns)
      : clock_(clock), service_ns_(std::move(service_ns)) {}

  absl::Status Issue() {
    sent_ns_.push_back(clock_->NowNs());
    clock_->AdvanceNs(service_ns_(static_cast<int>(sent_ns_.size()) - 1));
    return absl::OkStatus();
  }
  const std::vector<int64_t>& sent_ns() const { return sent_ns_; }

 private:
  FakeClock* clock_;
  std::function<int64_t(int)> service_ns_;
  std::vector<int64_t> sent_ns_;
};

// Request 10 stalls for 50 ms; every other one takes 100 µs.
int64_t StallAtTen(int i) { return i == 10 ? 50 * kMs : 100 * kUs; }

// Percentiles are bucket middles, within 1/2^(kSubBucketBits+1) of the recorded value.
void ExpectPercentileNear(int64_t reported_ns, int64_t expected_ns) {
  const double tolerance = expected_ns / double(2 << LatencyHistogram::kSubBucketBits);
  EXPECT_NEAR(double(reported_ns), double(expected_ns), tolerance);
}

int64_t CountAtLeast(const std::vector<int64_t>& values, int64_t threshold) {
  return std::count_if(values.begin(), values.end(), [&](int64_t v) { return v >= threshold; });
}

TEST(ClosedLoopTest, IssuesBackToBackAndStopsAtTheRequestCount) {
  FakeClock clock;
  FakeServer server(&clock, [](int) { return 250 * kUs; });
  std::atomic<int64_t> taken{0};
  Phase phase{.start_ns = clock.NowNs(), .max_requests = 40, .taken = &taken};
  WorkerStats stats;
  RunClosedLoop(
      clock, phase, [&] { return server.Issue(); }, &stats);
  EXPECT_EQ(stats.ok, 40);
  ASSERT_EQ(server.sent_ns().size(), 40u);
  EXPECT_EQ(server.sent_ns()[1] - server.sent_ns()[0], 250 * kUs);
  EXPECT_EQ(stats.latency.PercentileNs(99), 250 * kUs);
  EXPECT_EQ(stats.live_done.load(), 40);
}

TEST(ClosedLoopTest, StopsIssuingAtTheEndTime) {
  FakeClock clock;
  FakeServer server(&clock, [](int) { return 1 * kMs; });
  Phase phase{.start_ns = clock.NowNs(), .end_ns = clock.NowNs() + 10 * kMs};
  WorkerStats stats;
  RunClosedLoop(
      clock, phase, [&] { return server.Issue(); }, &stats);
  EXPECT_EQ(stats.ok, 10);
  EXPECT_EQ(stats.last_done_ns, phase.start_ns + 10 * kMs);
}

TEST(ClosedLoopTest, RecordsOnlyTheStalledRequestAsSlow) {
  // The coordinated omission a closed loop cannot avoid: while request 10 stalls, nothing else
  // is sent, so only one sample shows the stall.
  FakeClock clock;
  FakeServer server(&clock, StallAtTen);
  std::atomic<int64_t> taken{0};
  Phase phase{.start_ns = clock.NowNs(), .max_requests = 200, .taken = &taken};
  WorkerStats stats;
  RunClosedLoop(
      clock, phase, [&] { return server.Issue(); }, &stats);
  ExpectPercentileNear(stats.latency.PercentileNs(99), 100 * kUs);
  EXPECT_EQ(stats.latency.max_ns(), 50 * kMs);
}

TEST(OpenLoopTest, SendsEachRequestAtItsIntendedTime) {
  FakeClock clock;
  FakeWaiter waiter(&clock);
  FakeServer server(&clock, [](int) { return 100 * kUs; });
  ArrivalSchedule schedule(ArrivalKind::kConstant, 1000.0, 1);
  const int64_t start = clock.NowNs();
  Phase phase{.start_ns = start, .max_requests = 50};
  WorkerStats stats;
  RunOpenLoop(
      clock, waiter, phase, schedule, [&] { return server.Issue(); }, &stats);
  ASSERT_EQ(server.sent_ns().size(), 50u);
  for (size_t i = 0; i < 50; ++i) EXPECT_EQ(server.sent_ns()[i], start + int64_t(i) * kMs);
  EXPECT_EQ(stats.latency.max_ns(), 100 * kUs);
  EXPECT_EQ(stats.send_lag.max_ns(), 0);
}

TEST(OpenLoopTest, CountsLatencyFromTheIntendedTimeWhenTheServerStalls) {
  FakeClock clock;
  FakeWaiter waiter(&clock);
  FakeServer server(&clock, StallAtTen);
  ArrivalSchedule schedule(ArrivalKind::kConstant, 1000.0, 1);  // one request per ms
  const int64_t start = clock.NowNs();
  Phase phase{.start_ns = start, .max_requests = 200};
  WorkerStats stats;
  RunOpenLoop(
      clock, waiter, phase, schedule, [&] { return server.Issue(); }, &stats);
  ASSERT_EQ(stats.ok, 200);
  // Request 11 was due at 11 ms but could only go out when request 10 returned at 60 ms.
  EXPECT_EQ(server.sent_ns()[11], start + 60 * kMs);
  // Every request due during the stall waited: the backlog shrinks by 0.9 ms per request, so
  // requests 11..64 are at least 1 ms late, and p90 shows it (a closed loop would say 100 µs).
  std::vector<int64_t> lateness;
  for (size_t i = 0; i < server.sent_ns().size(); ++i) {
    lateness.push_back(server.sent_ns()[i] - (start + int64_t(i) * kMs));
  }
  EXPECT_EQ(CountAtLeast(lateness, 1 * kMs), 54);
  EXPECT_EQ(stats.latency.max_ns(), 50 * kMs);
  EXPECT_GT(stats.latency.PercentileNs(90), 10 * kMs);
  ExpectPercentileNear(stats.service.PercentileNs(90), 100 * kUs);
  // Latency = send lag + service time, request by request; the sums agree exactly.
  EXPECT_DOUBLE_EQ(stats.latency.mean_ns(), stats.send_lag.mean_ns() + stats.service.mean_ns());
}

TEST(OpenLoopTest, StopsAtTheEndTimeByIntendedTime) {
  FakeClock clock;
  FakeWaiter waiter(&clock);
  FakeServer server(&clock, [](int) { return 10 * kUs; });
  ArrivalSchedule schedule(ArrivalKind::kConstant, 100.0, 1);  // every 10 ms
  Phase phase{.start_ns = clock.NowNs(), .end_ns = clock.NowNs() + 95 * kMs};
  WorkerStats stats;
  RunOpenLoop(
      clock, waiter, phase, schedule, [&] { return server.Issue(); }, &stats);
  EXPECT_EQ(stats.ok, 10);  // due at 0, 10, ..., 90 ms
}

TEST(OpenLoopTest, DueRequestsPastTheDrainDeadlineAreCountedUnsent) {
  FakeClock clock;
  FakeWaiter waiter(&clock);
  FakeServer server(&clock, [](int) { return 10 * kMs; });  // 10× slower than the rate
  ArrivalSchedule schedule(ArrivalKind::kConstant, 1000.0, 1);
  const int64_t start = clock.NowNs();
  Phase phase{
      .start_ns = start, .end_ns = start + 100 * kMs, .drain_deadline_ns = start + 200 * kMs};
  WorkerStats stats;
  RunOpenLoop(
      clock, waiter, phase, schedule, [&] { return server.Issue(); }, &stats);
  EXPECT_EQ(stats.ok, 20);  // sent at 0, 10, ..., 190 ms
  EXPECT_EQ(stats.unsent, 80);
}

TEST(LoadWorkerTest, FailuresAreCountedByKindAndKeptOutOfLatency) {
  FakeClock clock;
  int calls = 0;
  auto issue = [&]() -> absl::Status {
    clock.AdvanceNs(kMs);
    ++calls;
    if (calls % 4 == 0) return client::HttpError(503, "queue full");
    if (calls % 5 == 0) return absl::DeadlineExceededError("no answer");
    return absl::OkStatus();
  };
  std::atomic<int64_t> taken{0};
  Phase phase{.start_ns = clock.NowNs(), .max_requests = 20, .taken = &taken};
  WorkerStats stats;
  RunClosedLoop(clock, phase, issue, &stats);
  EXPECT_EQ(stats.ok, 12);
  EXPECT_EQ(stats.failed, 8);
  EXPECT_EQ(stats.latency.count(), 12);
  ASSERT_EQ(stats.errors.size(), 2u);
  EXPECT_EQ(stats.errors["UNAVAILABLE (HTTP 503)"].count, 5);
  EXPECT_EQ(stats.errors["UNAVAILABLE (HTTP 503)"].example, "queue full");
  EXPECT_EQ(stats.errors["DEADLINE_EXCEEDED"].count, 3);
}

TEST(LoadWorkerTest, StopFlagEndsTheLoop) {
  FakeClock clock;
  std::atomic<bool> stop{false};
  int calls = 0;
  auto issue = [&]() {
    if (++calls == 3) stop = true;
    return absl::OkStatus();
  };
  Phase phase{.start_ns = clock.NowNs(), .stop = &stop};
  WorkerStats stats;
  RunClosedLoop(clock, phase, issue, &stats);
  EXPECT_EQ(calls, 3);
}

TEST(ErrorKindTest, NamesTheCodeAndTheServersStatus) {
  EXPECT_EQ(ErrorKind(client::HttpError(404, "x")), "NOT_FOUND (HTTP 404)");
  EXPECT_EQ(ErrorKind(client::GrpcError(14, "x")), "UNAVAILABLE (gRPC 14)");
  EXPECT_EQ(ErrorKind(absl::UnavailableError("refused")), "UNAVAILABLE");
}

}  // namespace
}  // namespace brigade::loadgen
