#include "schedule/p99_model_policy.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace brigade::schedule {

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

int P99ModelPolicy::EfficientSize(const LatencyProfile& profile, int max_rows) {
  // Only measured sizes count: a line fitted through a few noisy sizes can slope either way and
  // would make a cliff out of nothing.
  std::vector<std::pair<int, double>> rates;  // (rows, rows per ns), measured sizes only
  double best_rate = 0;
  for (int rows = 1; rows <= max_rows; ++rows) {
    const LatencyProfile::Estimate estimate = profile.Predict(-1, rows);
    if (estimate.p50_ns <= 0 || estimate.source != LatencyProfile::Source::kPooled) continue;
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

BatchChoice P99ModelPolicy::Choose(const BatchView& view) const {
  const int max_rows = std::max(1, view.max_batch_size);
  const int n = std::min(view.rows, max_rows);
  if (view.flush) return {max_rows, INT64_MAX, BatchReason::kFlush};
  const LatencyProfile* profile = view.load.profile;
  if (profile == nullptr || profile->empty()) return {n, INT64_MAX, BatchReason::kLearning};

  const int64_t budget_ns =
      view.slo_deadline_ns == INT64_MAX ? INT64_MAX : view.slo_deadline_ns - view.now_ns;
  const int slo_rows = budget_ns == INT64_MAX ? max_rows
                       : budget_ns <= 0
                           ? 0
                           : LargestSizeWithin(*profile, view.instance, max_rows, budget_ns);
  const int efficient = EfficientSize(*profile, max_rows);
  if (slo_rows == 0) return {efficient, INT64_MAX, BatchReason::kLate};

  const int needed = NeededSize(*profile, view.instance, max_rows, view.load.arrival_rows_per_s,
                                view.load.instances, options_.headroom);
  const int target = std::min({needed, slo_rows, efficient});
  // Cutting a batch below what the load needs would help the oldest request and delay everyone
  // behind it, and when overloaded it compounds; the cap is the SLO's size or the needed one,
  // and never past the most efficient size.
  const int slo_cap = std::max(slo_rows, std::min(needed, max_rows));
  const int cap = std::min(slo_cap, efficient);
  if (n >= target) {
    const BatchReason reason = n <= cap         ? BatchReason::kEnoughRows
                               : cap == slo_cap ? BatchReason::kSloLimit
                                                : BatchReason::kEfficient;
    return {std::min(n, cap), INT64_MAX, reason};
  }

  // Wait for the missing rows, but not past the last moment a batch of `target` still meets D.
  const int64_t latest_ns =
      view.slo_deadline_ns == INT64_MAX
          ? INT64_MAX
          : view.slo_deadline_ns - profile->Predict(view.instance, target).p99_ns;
  if (latest_ns <= view.now_ns) return {n, INT64_MAX, BatchReason::kSloLimit};
  const double missing = target - n;
  const double expected_ns =
      view.load.arrival_rows_per_s > 0 ? missing / view.load.arrival_rows_per_s * 1e9 : 0;
  const int64_t wait_ns =
      std::max<int64_t>(options_.min_wait_ns, static_cast<int64_t>(std::min(expected_ns, 1e15)));
  return {0, std::min(latest_ns, view.now_ns + wait_ns), BatchReason::kWait};
}

}  // namespace brigade::schedule
