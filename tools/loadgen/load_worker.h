#ifndef BRIGADE_TOOLS_LOADGEN_LOAD_WORKER_H_
#define BRIGADE_TOOLS_LOADGEN_LOAD_WORKER_H_

// The two request loops a load-generator worker runs, and what they record. A worker owns one
// connection (it calls `issue`, which blocks until the answer); the loops decide *when* to issue
// and *what latency* a request gets:
//
//   closed loop  the next request goes out as soon as the previous answer is in. Latency is the
//                service time (send → answer). Concurrency = number of workers.
//   open loop    request i is due at the schedule's i-th time, whatever happened before
//                (ArrivalSchedule). The worker takes the next due slot, sleeps until its time,
//                sends, and records latency from the *intended* time, so time a request spent
//                waiting for a free worker (because the server was slow) is counted: no
//                coordinated omission. It also records the service time and the send lag
//                (actual send − intended), which tells how far behind the generator fell.
//
// Only successful requests enter the latency histograms; failures are counted by kind.
//
// Time comes from a Clock and sleeping goes through a Waiter, so tests drive both loops with a
// FakeClock whose "sleep" advances time and whose `issue` advances it by a service time.
//
// Thread safety: each worker runs on its own thread with its own WorkerStats; the Phase's shared
// counters and the schedule are thread-safe. Live counters may be read from any thread.

#include <atomic>
#include <cstdint>
#include <limits>
#include <map>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "core/clock.h"
#include "tools/loadgen/arrival_schedule.h"
#include "tools/loadgen/latency_histogram.h"

namespace brigade::loadgen {

struct ErrorCount {
  int64_t count = 0;
  std::string example;  // the first message seen of this kind
};

// Errors by kind, e.g. "UNAVAILABLE (HTTP 503)", "DEADLINE_EXCEEDED", "NOT_FOUND (gRPC 5)".
using ErrorsByKind = std::map<std::string, ErrorCount>;

// The kind an error is counted under: the status code's name plus the server's HTTP status or
// gRPC code when the server sent one.
std::string ErrorKind(const absl::Status& status);

struct WorkerStats {
  // Reported latency: closed loop send → answer; open loop intended time → answer.
  LatencyHistogram latency;
  // Send → answer, both modes.
  LatencyHistogram service;
  // Open loop: actual send − intended send.
  LatencyHistogram send_lag;
  int64_t ok = 0;
  int64_t failed = 0;
  // Open loop: due requests never sent because the drain deadline passed first.
  int64_t unsent = 0;
  ErrorsByKind errors;
  // Clock time of the last answer (0 when nothing completed).
  int64_t last_done_ns = 0;

  // Read by the progress line while the worker runs.
  alignas(64) std::atomic<int64_t> live_done{0};
  std::atomic<int64_t> live_failed{0};

  // Adds `other`'s counts and histograms (not its live counters).
  void Merge(const WorkerStats& other);
};

// Sleeps until a time on Clock::Real()'s scale (or, in tests, a fake clock's).
class Waiter {
 public:
  virtual ~Waiter() = default;
  virtual void WaitUntilNs(int64_t deadline_ns) = 0;
  // clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME); lives forever.
  static Waiter* Real();
};

struct Phase {
  // Time zero of the phase (open loop: the schedule's offset 0).
  int64_t start_ns = 0;
  // Nothing is issued at or after this time (open loop: compared with the intended time).
  int64_t end_ns = std::numeric_limits<int64_t>::max();
  // Open loop: due requests still unsent at this time are dropped (counted as unsent), so a
  // server slower than the rate cannot stretch the run without bound.
  int64_t drain_deadline_ns = std::numeric_limits<int64_t>::max();
  // Requests to issue across all workers; -1 = no limit.
  int64_t max_requests = -1;
  // Closed loop with max_requests: the shared count of requests taken. Must be set then.
  std::atomic<int64_t>* taken = nullptr;
  // Set by anyone to stop every worker after its current request. Optional.
  const std::atomic<bool>* stop = nullptr;
};

// Performs one request and answers its status.
using IssueFn = absl::FunctionRef<absl::Status()>;

void RunClosedLoop(const Clock& clock, const Phase& phase, IssueFn issue, WorkerStats* stats);

void RunOpenLoop(const Clock& clock, Waiter& waiter, const Phase& phase, ArrivalSchedule& schedule,
                 IssueFn issue, WorkerStats* stats);

}  // namespace brigade::loadgen

#endif  // BRIGADE_TOOLS_LOADGEN_LOAD_WORKER_H_
