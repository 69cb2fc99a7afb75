#ifndef BRIGADE_SCHEDULER_LOAD_TRACKER_H_
#define BRIGADE_SCHEDULER_LOAD_TRACKER_H_

// LoadTracker: the live signals the batch policies and admission control decide with — the
// latency profile, the arrival rate, the instances' utilization and which instances are busy
// until when — gathered from the scheduler's events, with time always passed in (fake-clock
// testable). LoadSignals is the read-only picture handed to a policy for one decision.
//
// It also measures how late answers come against what was predicted when their request was
// queued (OnAnswered): the recent p99 of that lateness is the part of a request's latency the
// queue-and-profile prediction misses — the time before the queue (front end, routing), batch
// formation beyond the policy's wait, contention the profile's cells lag behind — so a router
// choosing by SLO adds it to the prediction (BatchQueue::PredictCompletionNs).
//
// Thread safety: none; the owner serializes access (BatchQueue, under the Scheduler's lock).

#include <cstdint>
#include <span>
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
    // Half-life of the lateness samples: short enough to follow a load ramp within a second,
    // long enough to hold the few hundred answers a p99 needs at a thousand requests a second.
    int64_t lateness_half_life_ns = 500'000'000;
  };

  explicit LoadTracker(Options options);

  void OnArrival(int rows, int64_t now_ns) { arrivals_.Add(rows, now_ns); }
  // `instance` starts a batch predicted to take `predicted_ns` (0 when unknown).
  void OnBatchStart(int instance, int64_t predicted_ns, int64_t now_ns);
  // `instance` finished a batch of `rows` rows after `duration_ns` of service (rows 0: the batch
  // was dropped before it ran; the instance is only marked idle).
  void OnBatchDone(int instance, int rows, int64_t duration_ns, int64_t now_ns);

  // Answers were handed back at `done_ns` to requests expected (predicted p99 completion, moved
  // back by the time each spent before the queue) at `expected_done_ns`; -1 entries had no
  // prediction and are skipped. Early answers count as on time (lateness 0).
  void OnAnswered(std::span<const int64_t> expected_done_ns, int64_t done_ns);
  // The recent p99 of the answers' lateness; 0 while fewer than kMinLatenessSamples answers
  // count (decayed) at `now_ns`, so a variant nobody is routed to any more is not judged by
  // its last overload forever: once its samples have aged out, it is predicted afresh.
  int64_t lateness_p99_ns(int64_t now_ns) const {
    return lateness_.Weight(now_ns) >= kMinLatenessSamples ? lateness_p99_ns_ : 0;
  }
  static constexpr double kMinLatenessSamples = 32;

  LoadSignals Signals(int64_t now_ns) const;
  const LatencyProfile& profile() const { return profile_; }

 private:
  const Options options_;
  LatencyProfile profile_;
  RateMeter arrivals_;
  RateMeter busy_ns_;
  // Per instance: predicted end of the running batch; -1 when idle.
  std::vector<int64_t> busy_until_ns_;
  DecayingHistogram lateness_;
  // lateness_'s p99, refreshed once per OnAnswered (a pass over its buckets), not per read.
  int64_t lateness_p99_ns_ = 0;
};

}  // namespace brigade::scheduler

#endif  // BRIGADE_SCHEDULER_LOAD_TRACKER_H_
