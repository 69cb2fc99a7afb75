#ifndef BRIGADE_SCHEDULER_SCHEDULER_STATS_H_
#define BRIGADE_SCHEDULER_SCHEDULER_STATS_H_

// SchedulerStats: why the scheduler did what it did — admissions and refusals by reason, requests
// that left the queue without running, and for every batch its size, the reason it left, how
// long its oldest request waited, the service time the profile predicted and the one measured.
// SchedulerSnapshot is the plain-value copy the Scheduler hands out (Scheduler::Snapshot()),
// meant for an exporter (Prometheus histograms: upper bounds + per-bucket counts + sum) and for
// the benchmark; it also carries the live load signals and the latency profile.
//
// Thread safety: none; the Scheduler updates and copies it under its lock.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "scheduler/batch_policy.h"
#include "scheduler/batch_queue.h"
#include "scheduler/latency_profile.h"

namespace brigade::scheduler {

// Durations in fixed microsecond buckets: counts[i] holds values <= kUpperBoundsUs[i] (and
// above the previous bound); the last count is everything above the last bound (+Inf).
struct DurationHistogram {
  static constexpr std::array<int64_t, 20> kUpperBoundsUs = {
      10,    25,    50,     100,    250,    500,     1000,    2500,    5000,     10000,
      25000, 50000, 100000, 250000, 500000, 1000000, 2500000, 5000000, 10000000, 30000000};
  std::array<uint64_t, kUpperBoundsUs.size() + 1> counts{};
  uint64_t count = 0;
  double sum_us = 0;

  void Add(int64_t duration_ns);
  // Upper bound (µs) of the bucket holding the q-quantile; 0 when empty, -1 when it is in +Inf.
  int64_t QuantileBoundUs(double q) const;
};

struct SchedulerSnapshot {
  std::string model_name;
  int64_t version = 0;
  std::string policy;

  // Admission (Enqueue).
  uint64_t admitted = 0;
  uint64_t refused_queue_full = 0;      // queue-wide bound
  uint64_t refused_level_full = 0;      // a priority level's max_queue_size
  uint64_t refused_expired = 0;         // deadline already passed on arrival
  uint64_t refused_predicted_late = 0;  // admission control
  uint64_t refused_draining = 0;
  // Refusal latency: Enqueue entry to the refusal's answer.
  DurationHistogram refusal_latency;

  // Left the queue without running.
  uint64_t timed_out = 0;  // REJECT timeout (timer or decision)
  uint64_t cancelled = 0;  // in the queue, or in a batch before it started
  uint64_t delayed = 0;    // DELAY timeout: moved behind its level (still served)

  // Batches.
  uint64_t batches = 0;
  uint64_t inline_batches = 0;       // of those, run on the enqueuing thread (run to completion)
  std::vector<uint64_t> batch_rows;  // index = rows in the batch
  std::array<uint64_t, kNumBatchReasons> reasons{};
  DurationHistogram batch_wait;            // the oldest request's queue wait at release
  DurationHistogram predicted_p99;         // the profile's p99 for the released size
  DurationHistogram service;               // measured service time of executed batches
  uint64_t predicted_batches = 0;          // executed batches that had a prediction
  uint64_t slower_than_predicted_p99 = 0;  // of those, how many took longer than their p99
  double abs_error_p50_us_sum = 0;         // sum of |measured - predicted p50|

  // Live state.
  size_t queue_size = 0;
  std::vector<size_t> level_sizes;  // index 0 = priority level 1
  size_t held_for_ordering = 0;
  double arrival_rows_per_s = 0;
  double utilization = 0;
  int busy_instances = 0;
  std::vector<LatencyProfile::Point> profile;
};

class SchedulerStats {
 public:
  explicit SchedulerStats(int max_batch_size);

  void RecordRefusal(Refusal refusal, int64_t latency_ns);
  void RecordRefusedDraining(int64_t latency_ns);
  void RecordAdmitted() { ++snapshot_.admitted; }
  // Requests removed from the queue: cancelled ones by their flag, the rest timed out.
  void RecordRemoved(const std::vector<QueuedRequest>& removed);
  void RecordCancelledBeforeStart(size_t count) { snapshot_.cancelled += count; }
  // `inline_run`: the batch runs on the enqueuing thread (Scheduler's run to completion).
  void RecordRelease(const BatchQueue::Decision& decision, bool inline_run = false);
  // An executed batch: its measured service time against what was predicted at release.
  void RecordOutcome(int64_t predicted_p50_ns, int64_t predicted_p99_ns, int64_t service_ns);

  // The counters; the caller fills in the live state.
  const SchedulerSnapshot& counters() const { return snapshot_; }

 private:
  SchedulerSnapshot snapshot_;
};

}  // namespace brigade::scheduler

#endif  // BRIGADE_SCHEDULER_SCHEDULER_STATS_H_
