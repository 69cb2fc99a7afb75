#include "scheduler/load_tracker.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace brigade::scheduler {

double RateMeter::Decayed(int64_t now_ns) const {
  if (sum_ <= 0 || now_ns <= last_ns_ || half_life_ns_ <= 0) return sum_;
  return sum_ *
         std::exp2(-static_cast<double>(now_ns - last_ns_) / static_cast<double>(half_life_ns_));
}

void RateMeter::Add(double amount, int64_t now_ns) {
  sum_ = Decayed(now_ns) + amount;
  last_ns_ = std::max(last_ns_, now_ns);
}

double RateMeter::PerSecond(int64_t now_ns) const {
  // The decayed sum of a steady rate r (per ns) converges to r * half_life / ln 2.
  if (half_life_ns_ <= 0) return 0;
  return Decayed(now_ns) * std::numbers::ln2 / static_cast<double>(half_life_ns_) * 1e9;
}

LoadTracker::LoadTracker(Options options)
    : options_(options),
      profile_({options.instances, options.max_rows, options.profile_half_life_ns}),
      arrivals_(options.rate_half_life_ns),
      busy_ns_(options.rate_half_life_ns),
      busy_until_ns_(static_cast<size_t>(std::max(1, options.instances)), -1),
      lateness_(options.lateness_half_life_ns) {}

void LoadTracker::OnAnswered(std::span<const int64_t> expected_done_ns, int64_t done_ns) {
  bool added = false;
  for (const int64_t expected_ns : expected_done_ns) {
    if (expected_ns < 0) continue;
    lateness_.Add(std::max<int64_t>(0, done_ns - expected_ns), done_ns);
    added = true;
  }
  if (!added) return;
  lateness_p99_ns_ = lateness_.Quantile(0.99);
}

void LoadTracker::OnBatchStart(int instance, int64_t predicted_ns, int64_t now_ns) {
  if (instance < 0 || static_cast<size_t>(instance) >= busy_until_ns_.size()) return;
  busy_until_ns_[static_cast<size_t>(instance)] = now_ns + std::max<int64_t>(0, predicted_ns);
}

void LoadTracker::OnBatchDone(int instance, int rows, int64_t duration_ns, int64_t now_ns) {
  if (instance >= 0 && static_cast<size_t>(instance) < busy_until_ns_.size()) {
    busy_until_ns_[static_cast<size_t>(instance)] = -1;
  }
  if (rows <= 0) return;  // nothing ran (every request was cancelled before it started)
  busy_ns_.Add(static_cast<double>(duration_ns), now_ns);
  profile_.Record(instance, rows, duration_ns, now_ns);
}

LoadSignals LoadTracker::Signals(int64_t now_ns) const {
  LoadSignals signals;
  signals.profile = &profile_;
  signals.arrival_rows_per_s = arrivals_.PerSecond(now_ns);
  signals.instances = static_cast<int>(busy_until_ns_.size());
  // Busy nanoseconds per second, per instance.
  signals.utilization = std::clamp(busy_ns_.PerSecond(now_ns) / 1e9 / signals.instances, 0.0, 1.0);
  int64_t first_free_ns = INT64_MAX;
  for (int64_t until_ns : busy_until_ns_) {
    const int64_t free_ns = until_ns < 0 ? now_ns : std::max(until_ns, now_ns);
    if (until_ns >= 0) ++signals.busy_instances;
    signals.free_at_ns.push_back(free_ns);
    first_free_ns = std::min(first_free_ns, free_ns);
  }
  signals.first_free_ns = first_free_ns;
  return signals;
}

}  // namespace brigade::scheduler
