#include "route/slo_controller.h"

#include <algorithm>
#include <cmath>

#include "core/check.h"

namespace brigade::route {

SloController::SloController(Options options) : options_(options) {
  BRIGADE_CHECK(options_.target_ns > 0, "an SLO controller needs a positive target");
  BRIGADE_CHECK(options_.min_samples > 0 && options_.min_samples <= kWindowCapacity,
                "an SLO window needs between 1 and kWindowCapacity samples");
}

void SloController::Record(int64_t latency_ns, int64_t now_ns) {
  std::array<int64_t, kWindowCapacity> closed;
  int closed_count = 0;
  {
    absl::MutexLock lock(&mu_);
    if (window_start_ns_ < 0) window_start_ns_ = now_ns;
    window_[static_cast<size_t>(count_++)] = std::max<int64_t>(latency_ns, 0);
    const bool full = count_ == kWindowCapacity;
    const bool due =
        count_ >= options_.min_samples && now_ns - window_start_ns_ >= options_.window_ns;
    if (!full && !due) return;
    std::copy_n(window_.begin(), count_, closed.begin());
    closed_count = count_;
    count_ = 0;
    window_start_ns_ = -1;
  }
  // The 99th percentile, nearest rank: with 100 samples the largest but one.
  const auto rank = static_cast<ptrdiff_t>(std::ceil(0.99 * closed_count)) - 1;
  auto end = closed.begin() + closed_count;
  std::nth_element(closed.begin(), closed.begin() + rank, end);
  Adjust(closed[static_cast<size_t>(rank)]);
}

void SloController::Adjust(int64_t p99_ns) {
  absl::MutexLock lock(&adjust_mu_);
  last_p99_ns_.store(p99_ns, std::memory_order_relaxed);
  const double target = static_cast<double>(options_.target_ns);
  const double low = options_.low * target;
  double margin = static_cast<double>(margin_ns_.load(std::memory_order_relaxed));
  const auto p99 = static_cast<double>(p99_ns);
  if (p99 > target) {
    margin -= p99 - target;
  } else if (p99 < low) {
    margin += options_.gain * (low - p99);
  } else {
    return;
  }
  margin = std::clamp(margin, -target, options_.max_margin_fraction * target);
  margin_ns_.store(static_cast<int64_t>(margin), std::memory_order_relaxed);
}

}  // namespace brigade::route
