#ifndef BRIGADE_SCHEDULER_LOAD_TRACKER_H_
#define BRIGADE_SCHEDULER_LOAD_TRACKER_H_

// LoadTracker: the live signals the batch policies and admission control decide with — the
// latency profile, the arrival rate, the instances' utilization and which instances are busy
// until when — gathered from the scheduler's events, with time always passed in (fake-clock
// testable). LoadSignals is the read-only picture handed to a policy for one decision.
//
// Thread safety: none; the owner serializes access (BatchQueue, under the Scheduler's lock).

#include <cstdint>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "scheduler/latency_profile.h"

namespace brigade::scheduler {

// An exponentially decaying sum of amounts (rows, busy nanoseconds) read as a rate: with a steady
// input of r per second it reads r once a few half-lives have passed.
class RateMeter {
 public:
  explicit RateMeter(int64_t half_life_ns) : half_life_ns_(half_life_ns) {}
  void Add(double amount, int64_t now_ns);
  double PerSecond(int64_t now_ns) const;

 private:
  double Decayed(int64_t now_ns) const;

  int64_t half_life_ns_;
  int64_t last_ns_ = 0;
  double sum_ = 0;
};

struct LoadSignals {
  // Borrowed from the tracker; valid for the decision it was handed to.
  const LatencyProfile* profile = nullptr;
  // Rows admitted per second (decayed).
  double arrival_rows_per_s = 0;
  // Fraction of the instances' time spent running batches (decayed), 0..1.
  double utilization = 0;
  int instances = 1;
  int busy_instances = 0;
  // When every instance is busy: the predicted time the first one frees up (never before now).
  // Otherwise now (an instance is free).
  int64_t first_free_ns = 0;
  // Per instance: the predicted end of its running batch, or now when idle. Empty: every
  // instance frees up at first_free_ns.
  absl::InlinedVector<int64_t, 8> free_at_ns;
};

class LoadTracker {
 public:
  struct Options {
    int instances = 1;
    int max_rows = 1;
    // Half-life of the latency profile's samples.
    int64_t profile_half_life_ns = 5'000'000'000;
    // Half-life of the arrival-rate and utilization meters (they must follow load changes fast).
    int64_t rate_half_life_ns = 200'000'000;
  };

  explicit LoadTracker(Options options);

  void OnArrival(int rows, int64_t now_ns) { arrivals_.Add(rows, now_ns); }
  // `instance` starts a batch predicted to take `predicted_ns` (0 when unknown).
  void OnBatchStart(int instance, int64_t predicted_ns, int64_t now_ns);
  // `instance` finished a batch of `rows` rows after `duration_ns` of service (rows 0: the batch
  // was dropped before it ran; the instance is only marked idle).
  void OnBatchDone(int instance, int rows, int64_t duration_ns, int64_t now_ns);

  LoadSignals Signals(int64_t now_ns) const;
  const LatencyProfile& profile() const { return profile_; }

 private:
  const Options options_;
  LatencyProfile profile_;
  RateMeter arrivals_;
  RateMeter busy_ns_;
  // Per instance: predicted end of the running batch; -1 when idle.
  std::vector<int64_t> busy_until_ns_;
};

}  // namespace brigade::scheduler

#endif  // BRIGADE_SCHEDULER_LOAD_TRACKER_H_
