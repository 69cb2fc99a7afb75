#include "tools/loadgen/load_worker.h"

#include <errno.h>
#include <sys/prctl.h>
#include <time.h>

#include <algorithm>

#include "absl/status/status.h"
#include "core/strings.h"
#include "tools/client/client_status.h"

namespace brigade::loadgen {
namespace {

class RealWaiter final : public Waiter {
 public:
  void WaitUntilNs(int64_t deadline_ns) override {
    // The default 50 µs timer slack would make every open-loop send up to 50 µs late (and count
    // it as latency); 1 ns asks the kernel to wake the thread as close to the deadline as it can.
    thread_local const bool slack_set = prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL) == 0;
    (void)slack_set;
    timespec deadline{};
    deadline.tv_sec = static_cast<time_t>(deadline_ns / 1'000'000'000);
    deadline.tv_nsec = static_cast<long>(deadline_ns % 1'000'000'000);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nullptr) == EINTR) {
    }
  }
};

bool Stopped(const Phase& phase) {
  return phase.stop != nullptr && phase.stop->load(std::memory_order_relaxed);
}

void RecordOutcome(const absl::Status& status, WorkerStats* stats) {
  if (status.ok()) {
    ++stats->ok;
    stats->live_done.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  ++stats->failed;
  stats->live_failed.fetch_add(1, std::memory_order_relaxed);
  ErrorCount& count = stats->errors[ErrorKind(status)];
  if (count.count++ == 0) count.example = std::string(ToStd(status.message()));
}

}  // namespace

std::string ErrorKind(const absl::Status& status) {
  std::string kind = absl::StatusCodeToString(status.code());
  if (std::optional<int> http = client::HttpStatusOf(status)) {
    return StrCat(kind, " (HTTP ", *http, ")");
  }
  if (std::optional<int> grpc = client::GrpcCodeOf(status)) {
    return StrCat(kind, " (gRPC ", *grpc, ")");
  }
  return kind;
}

void WorkerStats::Merge(const WorkerStats& other) {
  latency.Merge(other.latency);
  service.Merge(other.service);
  send_lag.Merge(other.send_lag);
  ok += other.ok;
  failed += other.failed;
  unsent += other.unsent;
  for (const auto& [kind, count] : other.errors) {
    ErrorCount& mine = errors[kind];
    if (mine.count == 0) mine.example = count.example;
    mine.count += count.count;
  }
  last_done_ns = std::max(last_done_ns, other.last_done_ns);
}

Waiter* Waiter::Real() {
  static RealWaiter waiter;  // stateless, trivially destructible
  return &waiter;
}

void RunClosedLoop(const Clock& clock, const Phase& phase, IssueFn issue, WorkerStats* stats) {
  while (!Stopped(phase)) {
    if (phase.max_requests >= 0 &&
        phase.taken->fetch_add(1, std::memory_order_relaxed) >= phase.max_requests) {
      break;
    }
    const int64_t send_ns = clock.NowNs();
    if (send_ns >= phase.end_ns) break;
    const absl::Status status = issue();
    const int64_t done_ns = clock.NowNs();
    stats->last_done_ns = done_ns;
    if (status.ok()) {
      stats->latency.Record(done_ns - send_ns);
      stats->service.Record(done_ns - send_ns);
    }
    RecordOutcome(status, stats);
  }
}

void RunOpenLoop(const Clock& clock, Waiter& waiter, const Phase& phase, ArrivalSchedule& schedule,
                 IssueFn issue, WorkerStats* stats) {
  while (!Stopped(phase)) {
    const ArrivalSchedule::Slot slot = schedule.Next();
    if (phase.max_requests >= 0 && slot.index >= phase.max_requests) break;
    const int64_t intended_ns = phase.start_ns + slot.offset_ns;
    if (intended_ns >= phase.end_ns) break;
    int64_t now_ns = clock.NowNs();
    if (now_ns < intended_ns) {
      waiter.WaitUntilNs(intended_ns);
      now_ns = clock.NowNs();
    }
    if (now_ns >= phase.drain_deadline_ns) {
      // Every later slot is due even earlier relative to now: count this one and stop.
      ++stats->unsent;
      continue;
    }
    const int64_t send_ns = now_ns;
    const absl::Status status = issue();
    const int64_t done_ns = clock.NowNs();
    stats->last_done_ns = done_ns;
    if (status.ok()) {
      stats->latency.Record(done_ns - intended_ns);
      stats->service.Record(done_ns - send_ns);
      stats->send_lag.Record(send_ns - intended_ns);
    }
    RecordOutcome(status, stats);
  }
}

}  // namespace brigade::loadgen
