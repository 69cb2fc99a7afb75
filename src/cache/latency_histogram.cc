#include "cache/latency_histogram.h"

#include <algorithm>

namespace brigade::cache {
namespace {

constexpr std::array<int64_t, LatencyHistogram::kBounds> kUpperBoundsNs = {
    1'000,   2'000,     5'000,     10'000,    20'000,     50'000,     100'000,    200'000,
    500'000, 1'000'000, 2'000'000, 5'000'000, 10'000'000, 20'000'000, 50'000'000, 100'000'000};

}  // namespace

void LatencyHistogram::Record(int64_t ns) {
  ns = std::max<int64_t>(0, ns);
  const auto it = std::lower_bound(kUpperBoundsNs.begin(), kUpperBoundsNs.end(), ns);
  counts_[static_cast<size_t>(it - kUpperBoundsNs.begin())].fetch_add(1, std::memory_order_relaxed);
  sum_ns_.fetch_add(static_cast<uint64_t>(ns), std::memory_order_relaxed);
}

LatencySnapshot LatencyHistogram::Snapshot() const {
  LatencySnapshot snapshot;
  snapshot.upper_bounds_ns.assign(kUpperBoundsNs.begin(), kUpperBoundsNs.end());
  snapshot.counts.reserve(counts_.size());
  for (const auto& count : counts_) {
    snapshot.counts.push_back(count.load(std::memory_order_relaxed));
    snapshot.count += snapshot.counts.back();
  }
  snapshot.sum_ns = sum_ns_.load(std::memory_order_relaxed);
  return snapshot;
}

int64_t LatencySnapshot::QuantileUpperBoundNs(double quantile) const {
  if (count == 0 || upper_bounds_ns.empty()) return 0;
  const double target = std::clamp(quantile, 0.0, 1.0) * static_cast<double>(count);
  uint64_t seen = 0;
  for (size_t i = 0; i < upper_bounds_ns.size(); ++i) {
    seen += counts[i];
    if (static_cast<double>(seen) >= target) return upper_bounds_ns[i];
  }
  return upper_bounds_ns.back();
}

}  // namespace brigade::cache
