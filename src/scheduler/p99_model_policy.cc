#include "scheduler/p99_model_policy.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>
#include <vector>

namespace brigade::scheduler {

int P99ModelPolicy::NeededSize(const LatencyProfile& profile, int instance, int max_rows,
                               double rows_per_s, int instances, double headroom) {
  const double per_instance_per_ns =
      rows_per_s / 1e9 / std::max(1, instances) / std::clamp(headroom, 0.05, 1.0);
  if (per_instance_per_ns <= 0) return 1;
  // Throughput b / p50(b) is not monotone in general; scan (max_rows is small).
  for (int rows = 1; rows <= max_rows; ++rows) {
    const int64_t p50_ns = profile.Predict(instance, rows).p50_ns;
    if (p50_ns <= 0 || rows / static_cast<double>(p50_ns) >= per_instance_per_ns) return rows;
  }
  return max_rows + 1;
}

int P99ModelPolicy::EfficientSize(const LatencyProfile& profile, int max_rows, int64_t now_ns) {
  // Only measured sizes count: a line fitted through a few noisy sizes can slope either way and
  // would make a cliff out of nothing.
  std::vector<std::pair<int, double>> rates;  // (rows, rows per ns), measured sizes only
  double best_rate = 0;
  for (int rows = 1; rows <= max_rows; ++rows) {
    const LatencyProfile::Estimate estimate = profile.Predict(-1, rows);
    if (estimate.p50_ns <= 0 || estimate.source != LatencyProfile::Source::kPooled ||
        !profile.FreshlyMeasured(rows, now_ns)) {
      continue;
    }
    rates.emplace_back(rows, rows / static_cast<double>(estimate.p50_ns));
    best_rate = std::max(best_rate, rates.back().second);
  }
  if (rates.empty()) return max_rows;
  // The largest measured size within kEfficientTolerance of the best rate; when that is the
  // largest size measured, nothing bigger is known to be worse.
  int efficient = rates.front().first;
  for (const auto& [rows, rate] : rates) {
    if (rate >= best_rate * kEfficientTolerance) efficient = rows;
  }
  return efficient == rates.back().first ? max_rows : efficient;
}

int P99ModelPolicy::AmortizedSize(const LatencyProfile& profile, int floor_rows, int max_rows) {
  max_rows = std::max(1, max_rows);
  floor_rows = std::clamp(floor_rows, 1, max_rows);
  // A line through every size with samples, not the sizes one by one: single sizes are noisy (a
  // 5% wobble between neighbours reads as anything from free rows to a cliff) and sizes the
  // policy rarely forms have too few samples to be measurements, yet together they show a slope.
  // Only sizes up to max_rows: the caller keeps max_rows below any cliff (EfficientSize), whose
  // sizes would tilt the line.
  const std::optional<LatencyProfile::CostLine> line = profile.PooledP50Line(max_rows);
  // Fewer than two sizes seen: nothing is known not to amortize.
  if (!line.has_value() || line->per_row_ns <= 0) return max_rows;
  // Cheap rows always join: each batch also costs the server time the instance's clock does not
  // see (waking threads, handing answers back), which only batching amortizes.
  if (line->per_row_ns < kMinSplitRowNs) return max_rows;
  if (line->fixed_ns <= 0) return floor_rows;
  // A row's marginal cost over the batch's average cost per row, per_row·b / (fixed + per_row·b),
  // stays at or below kMaxElasticity up to this size.
  const double limit = kMaxElasticity / (1 - kMaxElasticity) * line->fixed_ns / line->per_row_ns;
  return static_cast<int>(std::clamp(std::floor(limit), static_cast<double>(floor_rows),
                                     static_cast<double>(max_rows)));
}

int64_t P99ModelPolicy::MergeSavingNs(const LatencyProfile& profile, int instance, int rows,
                                      int more_rows) {
  const LatencyProfile::Estimate now = profile.Predict(instance, rows);
  const LatencyProfile::Estimate later = profile.Predict(instance, more_rows);
  const LatencyProfile::Estimate merged = profile.Predict(instance, rows + more_rows);
  // At the median and at the tail: a merge whose bigger batch has a much wider tail than the two
  // it replaces saves nothing the p99 sees. Stalls common to every size (a descheduled thread)
  // widen all three tails alike and leave the tail's saving at least the median's.
  const int64_t median_saving_ns = now.p50_ns + later.p50_ns - merged.p50_ns;
  const int64_t tail_saving_ns = now.p99_ns + later.p99_ns - merged.p99_ns;
  return std::max<int64_t>(0, std::min(median_saving_ns, tail_saving_ns));
}

P99ModelPolicy::WaitPlan P99ModelPolicy::RowsWorthWaitingFor(const LatencyProfile& profile,
                                                             int instance, int rows,
                                                             int missing_rows, double rows_per_s) {
  WaitPlan plan;
  if (rows_per_s <= 0) return plan;  // nothing is expected to arrive
  for (int more = 1; more <= missing_rows; ++more) {
    const double idle_ns = more / rows_per_s * 1e9;
    const int64_t saving_ns = MergeSavingNs(profile, instance, rows, more);
    if (idle_ns <= static_cast<double>(saving_ns)) plan = {more, saving_ns};
  }
  return plan;
}

int64_t P99ModelPolicy::WaitForRowsNs(int missing_rows, double rows_per_s) const {
  const double expected_ns = rows_per_s > 0 ? missing_rows / rows_per_s * 1e9 : 0;
  return std::max<int64_t>(options_.min_wait_ns, static_cast<int64_t>(std::min(expected_ns, 1e15)));
}

int64_t P99ModelPolicy::ExtraWaitNs(const AdmissionView& view, int rows) const {
  const LatencyProfile& profile = *view.load.profile;
  const int max_rows = std::max(1, view.max_batch_size);
  const int largest = LargestBatchRows(profile, max_rows, view.now_ns);
  if (rows >= largest) return 0;
  const WaitPlan plan =
      RowsWorthWaitingFor(profile, -1, rows, largest - rows, view.load.arrival_rows_per_s);
  if (plan.rows == 0) return 0;
  return std::min({profile.Predict(-1, 1).p50_ns, plan.saving_ns,
                   WaitForRowsNs(plan.rows, view.load.arrival_rows_per_s)});
}

BatchChoice P99ModelPolicy::Choose(const BatchView& view) const {
  const int max_rows = std::max(1, view.max_batch_size);
  const int n = std::min(view.rows, max_rows);
  const LatencyProfile* profile = view.load.profile;
  const bool profiled = profile != nullptr && !profile->empty();
  // Draining: nothing waits, and batches are as big as still amortizes (bigger ones would only
  // hold the rows at their front back).
  if (view.flush) {
    return {profiled ? AmortizedSize(*profile, 1, max_rows) : max_rows, INT64_MAX,
            BatchReason::kFlush};
  }
  if (!profiled) return {n, INT64_MAX, BatchReason::kLearning};

  const int64_t budget_ns =
      view.slo_deadline_ns == INT64_MAX ? INT64_MAX : view.slo_deadline_ns - view.now_ns;
  const int slo_rows = budget_ns == INT64_MAX ? max_rows
                       : budget_ns <= 0
                           ? 0
                           : LargestSizeWithin(*profile, view.instance, max_rows, budget_ns);
  const int efficient = EfficientSize(*profile, max_rows, view.now_ns);
  // Rows past the largest size that still amortizes add time without adding throughput.
  if (slo_rows == 0) return {AmortizedSize(*profile, 1, efficient), INT64_MAX, BatchReason::kLate};

  const int needed = NeededSize(*profile, view.instance, max_rows, view.load.arrival_rows_per_s,
                                view.load.instances, options_.headroom);
  // When no size keeps up, the target is the biggest batch the SLO and the cliff allow — but
  // no bigger than still amortizes (a model whose time is proportional to rows gains nothing
  // from waiting for a full batch).
  const int limit = std::min(slo_rows, efficient);
  const int target =
      needed <= max_rows ? std::min(needed, limit) : AmortizedSize(*profile, 1, limit);
  // Cutting a batch below what the load needs would help the oldest request and delay everyone
  // behind it, and when overloaded it compounds; the cap is the SLO's size or the needed one,
  // and never past the most efficient size.
  const int slo_cap = std::max(slo_rows, std::min(needed, max_rows));
  const int cap = std::min(slo_cap, efficient);
  if (n >= target) {
    // Past the target rows join only while they amortize: otherwise they lengthen the batch for
    // the rows already in it and gain nothing (the next batch or the next free instance takes
    // them).
    const int upper = std::min(n, cap);
    const int rows = AmortizedSize(*profile, std::min(target, upper), upper);
    const BatchReason reason = rows < upper     ? BatchReason::kNoGain
                               : n <= cap       ? BatchReason::kEnoughRows
                               : cap == slo_cap ? BatchReason::kSloLimit
                                                : BatchReason::kEfficient;
    return {rows, INT64_MAX, reason};
  }

  // Short of the rows the load wants, and the instance asking is idle: wait only for the rows
  // whose merge into this batch saves more instance time than waiting for them idles it.
  const WaitPlan plan =
      RowsWorthWaitingFor(*profile, view.instance, n, target - n, view.load.arrival_rows_per_s);
  if (plan.rows == 0) return {n, INT64_MAX, BatchReason::kGreedyFlatCost};
  const int goal = n + plan.rows;
  // Never past the last moment a batch of `goal` rows still meets D.
  const int64_t latest_ns =
      view.slo_deadline_ns == INT64_MAX
          ? INT64_MAX
          : view.slo_deadline_ns - profile->Predict(view.instance, goal).p99_ns;
  if (latest_ns <= view.now_ns) return {n, INT64_MAX, BatchReason::kSloLimit};
  // Nor longer, counted from the oldest request's arrival, than the merge saves or a batch of one
  // row takes: past that the idle instance has lost more capacity than the bigger batch returns,
  // and rows that arrive later join the next batch anyway (the load needs Bneed rows per batch on
  // average, not in every batch). Under overload this still holds: an idle instance is capacity
  // lost, and a backlog fills the next batches without waiting.
  const int64_t give_up_ns =
      view.oldest_enqueue_ns + std::min(profile->Predict(view.instance, 1).p50_ns, plan.saving_ns);
  if (give_up_ns <= view.now_ns) return {n, INT64_MAX, BatchReason::kDelayExpired};
  const int64_t wait_ns = WaitForRowsNs(plan.rows, view.load.arrival_rows_per_s);
  return {0, std::min({latest_ns, give_up_ns, view.now_ns + wait_ns}), BatchReason::kWait};
}

}  // namespace brigade::scheduler
