#include "scheduler/batch_policy.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace brigade::scheduler {

std::string_view BatchReasonName(BatchReason reason) {
  switch (reason) {
    case BatchReason::kWait:
      return "wait";
    case BatchReason::kNoBatching:
      return "no_batching";
    case BatchReason::kFull:
      return "full";
    case BatchReason::kPreferred:
      return "preferred";
    case BatchReason::kDelayExpired:
      return "delay_expired";
    case BatchReason::kFlush:
      return "flush";
    case BatchReason::kFormula:
      return "formula";
    case BatchReason::kLearning:
      return "learning";
    case BatchReason::kEnoughRows:
      return "enough_rows";
    case BatchReason::kSloLimit:
      return "slo_limit";
    case BatchReason::kLate:
      return "late";
    case BatchReason::kEfficient:
      return "efficient";
    case BatchReason::kNoGain:
      return "no_gain";
    case BatchReason::kGreedyFlatCost:
      return "greedy_flat_cost";
  }
  return "unknown";
}

int LargestSizeWithin(const LatencyProfile& profile, int instance, int max_rows,
                      int64_t budget_ns) {
  if (profile.empty()) return max_rows;
  // Predictions never decrease with rows, so the sizes that fit are a prefix.
  int low = 0, high = max_rows;
  while (low < high) {
    const int mid = (low + high + 1) / 2;
    if (profile.Predict(instance, mid).p99_ns <= budget_ns) {
      low = mid;
    } else {
      high = mid - 1;
    }
  }
  return low;
}

int64_t BatchPolicy::PredictCompletionNs(const AdmissionView& view) const {
  if (view.load.profile == nullptr || view.load.profile->empty()) return -1;
  const int total = view.rows_ahead + view.rows;
  const int batch = std::clamp(
      total, 1,
      std::max(1, LargestBatchRows(*view.load.profile, view.max_batch_size, view.now_ns)));
  const LatencyProfile::Estimate estimate = view.load.profile->Predict(-1, batch);
  if (estimate.source == LatencyProfile::Source::kUnknown) return -1;
  // Each batch goes to the instance that frees up first; the request's own batch is the last.
  // Every batch is charged its p99 (the p99 of a sum is at most the sum of the p99s), so an
  // admitted request's p99 stays within its deadline rather than on it.
  absl::InlinedVector<int64_t, 8> free_at_ns = view.load.free_at_ns;
  if (free_at_ns.empty()) {
    free_at_ns.assign(static_cast<size_t>(std::max(1, view.load.instances)),
                      view.load.first_free_ns);
  }
  for (int64_t& free_ns : free_at_ns) free_ns = std::max(free_ns, view.now_ns);
  const int batches = (total + batch - 1) / batch;
  for (int b = 1;; ++b) {
    const auto first = std::min_element(free_at_ns.begin(), free_at_ns.end());
    if (b == batches) return *first + estimate.p99_ns + ExtraWaitNs(view, total);
    *first += estimate.p99_ns;
  }
}

FixedDelayPolicy::FixedDelayPolicy(int64_t max_queue_delay_us, std::vector<int> preferred)
    : delay_ns_(max_queue_delay_us * 1000), preferred_(std::move(preferred)) {}

int64_t FixedDelayPolicy::ExtraWaitNs(const AdmissionView& view, int rows) const {
  return rows >= view.max_batch_size ? 0 : delay_ns_;
}

BatchChoice FixedDelayPolicy::Choose(const BatchView& view) const {
  const bool full = view.rows >= view.max_batch_size;
  const bool exactly_preferred =
      std::find(preferred_.begin(), preferred_.end(), view.rows) != preferred_.end();
  if (full) return {view.max_batch_size, INT64_MAX, BatchReason::kFull};
  if (exactly_preferred) return {view.rows, INT64_MAX, BatchReason::kPreferred};
  const bool expired = view.now_ns - view.oldest_enqueue_ns >= delay_ns_;
  if (!expired && !view.flush) {
    return {0, view.oldest_enqueue_ns + delay_ns_, BatchReason::kWait};
  }
  const BatchReason reason = view.flush ? BatchReason::kFlush : BatchReason::kDelayExpired;
  // Released by the delay: cut to the largest preferred size the candidate prefix can fill.
  int best = 0;
  for (int size : preferred_) {
    if (size <= view.rows) best = std::max(best, size);
  }
  if (best == 0) return {view.rows, INT64_MAX, reason};
  int kept = 0;
  for (int rows : view.request_rows) {
    if (kept + rows > best) break;
    kept += rows;
  }
  return {kept > 0 ? kept : view.rows, INT64_MAX, reason};
}

QueueFormulaPolicy::QueueFormulaPolicy(int64_t target_p99_us)
    : target_p99_ns_(target_p99_us * 1000) {}

BatchChoice QueueFormulaPolicy::Choose(const BatchView& view) const {
  int cap = view.max_batch_size;
  if (target_p99_ns_ > 0 && view.load.profile != nullptr) {
    cap = std::max(1, LargestSizeWithin(*view.load.profile, view.instance, cap, target_p99_ns_));
  }
  const double load = std::clamp(view.load.utilization, 0.0, 1.0);
  const int size = static_cast<int>(std::ceil(view.queued_rows / (1.0 + load)));
  const BatchReason reason = view.flush ? BatchReason::kFlush : BatchReason::kFormula;
  return {std::clamp(size, 1, cap), INT64_MAX, reason};
}

}  // namespace brigade::scheduler
