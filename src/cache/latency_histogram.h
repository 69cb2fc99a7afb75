#ifndef BRIGADE_CACHE_LATENCY_HISTOGRAM_H_
#define BRIGADE_CACHE_LATENCY_HISTOGRAM_H_

// LatencyHistogram: fixed-bucket latency counts for cache lookups, lock-free (relaxed atomics),
// cheap enough for every request. Bucket upper bounds run in 1-2-5 steps from 1 µs to 100 ms,
// then +Inf, which resolves sub-10 µs memory hits and ~100 µs to 2 ms Redis round trips alike.
// Counts are per bucket (not cumulative); cumulate them to export a Prometheus histogram.
//
// Thread safety: Record() and Snapshot() may be called from any thread; a snapshot is not a
// transaction (each bucket is read atomically).

#include <array>
#include <atomic>
#include <cstdint>
#include <vector>

namespace brigade::cache {

struct LatencySnapshot {
  std::vector<int64_t> upper_bounds_ns;  // the last bucket (+Inf) has no bound listed
  std::vector<uint64_t> counts;          // upper_bounds_ns.size() + 1 entries, not cumulative
  uint64_t count = 0;
  uint64_t sum_ns = 0;

  // The smallest bucket bound at or below which `quantile` (0..1) of the samples lie; the last
  // bound when they fall in +Inf; 0 with no samples. Coarse by construction (bucket resolution).
  int64_t QuantileUpperBoundNs(double quantile) const;
};

class LatencyHistogram {
 public:
  static constexpr int kBounds = 16;

  void Record(int64_t ns);
  LatencySnapshot Snapshot() const;

 private:
  std::array<std::atomic<uint64_t>, kBounds + 1> counts_{};
  std::atomic<uint64_t> sum_ns_{0};
};

}  // namespace brigade::cache

#endif  // BRIGADE_CACHE_LATENCY_HISTOGRAM_H_
