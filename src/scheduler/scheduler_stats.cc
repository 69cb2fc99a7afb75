#include "scheduler/scheduler_stats.h"

#include <algorithm>
#include <cstdlib>

namespace brigade::scheduler {

void DurationHistogram::Add(int64_t duration_ns) {
  const int64_t us = std::max<int64_t>(0, duration_ns) / 1000;
  const auto bucket = static_cast<size_t>(
      std::lower_bound(kUpperBoundsUs.begin(), kUpperBoundsUs.end(), us) - kUpperBoundsUs.begin());
  ++counts[bucket];
  ++count;
  sum_us += static_cast<double>(std::max<int64_t>(0, duration_ns)) / 1000.0;
}

int64_t DurationHistogram::QuantileBoundUs(double q) const {
  if (count == 0) return 0;
  const double target = std::clamp(q, 0.0, 1.0) * static_cast<double>(count);
  uint64_t seen = 0;
  for (size_t b = 0; b < kUpperBoundsUs.size(); ++b) {
    seen += counts[b];
    if (static_cast<double>(seen) >= target) return kUpperBoundsUs[b];
  }
  return -1;
}

SchedulerStats::SchedulerStats(int max_batch_size) {
  snapshot_.batch_rows.resize(static_cast<size_t>(std::max(1, max_batch_size)) + 1);
}

void SchedulerStats::RecordRefusal(Refusal refusal, int64_t latency_ns) {
  switch (refusal) {
    case Refusal::kQueueFull:
      ++snapshot_.refused_queue_full;
      break;
    case Refusal::kLevelFull:
      ++snapshot_.refused_level_full;
      break;
    case Refusal::kExpired:
      ++snapshot_.refused_expired;
      break;
    case Refusal::kPredictedLate:
      ++snapshot_.refused_predicted_late;
      break;
    case Refusal::kNone:
      return;
  }
  snapshot_.refusal_latency.Add(latency_ns);
}

void SchedulerStats::RecordRefusedDraining(int64_t latency_ns) {
  ++snapshot_.refused_draining;
  snapshot_.refusal_latency.Add(latency_ns);
}

void SchedulerStats::RecordRemoved(const std::vector<QueuedRequest>& removed) {
  for (const QueuedRequest& queued : removed) {
    if (queued.request->cancelled()) {
      ++snapshot_.cancelled;
    } else {
      ++snapshot_.timed_out;
    }
  }
}

void SchedulerStats::RecordRelease(const BatchQueue::Decision& decision, bool inline_run) {
  ++snapshot_.batches;
  if (inline_run) ++snapshot_.inline_batches;
  const size_t rows =
      std::min(static_cast<size_t>(std::max(0, decision.rows)), snapshot_.batch_rows.size() - 1);
  ++snapshot_.batch_rows[rows];
  ++snapshot_.reasons[static_cast<size_t>(decision.reason)];
  snapshot_.batch_wait.Add(decision.oldest_wait_ns);
  if (decision.predicted_p99_ns > 0) snapshot_.predicted_p99.Add(decision.predicted_p99_ns);
}

void SchedulerStats::RecordOutcome(int64_t predicted_p50_ns, int64_t predicted_p99_ns,
                                   int64_t service_ns) {
  snapshot_.service.Add(service_ns);
  if (predicted_p99_ns <= 0) return;
  ++snapshot_.predicted_batches;
  if (service_ns > predicted_p99_ns) ++snapshot_.slower_than_predicted_p99;
  snapshot_.abs_error_p50_us_sum +=
      static_cast<double>(std::llabs(service_ns - predicted_p50_ns)) / 1000.0;
}

}  // namespace brigade::scheduler
