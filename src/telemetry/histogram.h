#ifndef BRIGADE_TELEMETRY_HISTOGRAM_H_
#define BRIGADE_TELEMETRY_HISTOGRAM_H_

// Fixed-bucket histograms with integer observations.
//
//   HistogramBuckets  the immutable bucket layout: strictly increasing upper bounds in raw integer
//                     units (ns for durations, rows for batch sizes) and the divisor that turns
//                     raw units into the exposed unit (1e9: ns → seconds; dividing two exact
//                     integers keeps bounds such as 1e-06 exact in the text). Bucket i counts
//                     values <= bound i (Prometheus `le`); one more bucket holds the rest (+Inf).
//   Histogram         the cell: per-thread shards (metric_shard.h) of bucket counts plus a sum.
//                     Observe() is a binary search over the bounds and two relaxed fetch_adds;
//                     the count is the sum of the buckets, so `_count` always equals the +Inf
//                     bucket.
//   HistogramSnapshot what Snapshot() reads: per-bucket (non-cumulative) counts and the sum.
//   EstimateQuantile  Prometheus' histogram_quantile: linear interpolation inside the bucket that
//                     holds the rank, 0 as the lower edge of the first bucket, and the last finite
//                     bound for ranks that fall in +Inf. The dashboard uses the same algorithm.
//
// Thread safety: HistogramBuckets is immutable. Histogram::Observe and Snapshot are safe from any
// thread; a snapshot taken during updates may see a bucket incremented before the sum (relaxed).
// Negative observations count as 0 (durations and sizes are never negative; a reversed stamp is
// a caller bug that must not corrupt the sum).

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "absl/status/statusor.h"

namespace brigade::telemetry {

class HistogramBuckets {
 public:
  // INVALID_ARGUMENT unless `upper_bounds` is non-empty and strictly increasing and
  // `exposition_divisor` is positive.
  static absl::StatusOr<HistogramBuckets> Create(std::vector<int64_t> upper_bounds,
                                                 int64_t exposition_divisor = 1);

  // Durations: 1-2-5 steps per decade from 100 ns to 10 s (25 buckets), observed in ns, exposed
  // in seconds.
  static const HistogramBuckets& LatencyNs();
  // Batch sizes and other small counts: 1, 2, 4, ..., 1024.
  static const HistogramBuckets& PowersOfTwo();

  // The bucket `value` falls in: the first bound >= value, or size() for +Inf.
  size_t Index(int64_t value) const;
  // Finite buckets; the +Inf bucket is extra.
  size_t size() const { return upper_bounds_.size(); }
  std::span<const int64_t> upper_bounds() const { return upper_bounds_; }
  int64_t exposition_divisor() const { return exposition_divisor_; }
  // `raw` in the exposed unit.
  double Expose(double raw) const { return raw / static_cast<double>(exposition_divisor_); }

 private:
  HistogramBuckets(std::vector<int64_t> upper_bounds, int64_t exposition_divisor)
      : upper_bounds_(std::move(upper_bounds)), exposition_divisor_(exposition_divisor) {}

  std::vector<int64_t> upper_bounds_;
  int64_t exposition_divisor_;
};

struct HistogramSnapshot {
  // size() + 1 entries: one per finite bucket, then +Inf. Not cumulative.
  std::vector<uint64_t> counts;
  // Sum of observations, raw units.
  uint64_t sum = 0;

  uint64_t count() const;
  // Adds `other` (same layout) into this one; an empty snapshot takes other's layout.
  void Merge(const HistogramSnapshot& other);
};

// The q-quantile (0 <= q <= 1) in raw units; NaN when the snapshot is empty.
double EstimateQuantile(const HistogramBuckets& buckets, const HistogramSnapshot& snapshot,
                        double q);

class Histogram {
 public:
  // `buckets` is shared by every cell of a family.
  explicit Histogram(std::shared_ptr<const HistogramBuckets> buckets);
  Histogram(const Histogram&) = delete;
  Histogram& operator=(const Histogram&) = delete;

  void Observe(int64_t value);
  HistogramSnapshot Snapshot() const;
  const HistogramBuckets& buckets() const { return *buckets_; }

 private:
  // One cache line of counters; a shard is `stride_ / 8` whole lines so shards never share one.
  struct alignas(64) Line {
    std::atomic<uint64_t> slot[8];
  };
  std::atomic<uint64_t>& Slot(int shard, size_t index) const {
    const size_t flat = static_cast<size_t>(shard) * stride_ + index;
    return lines_[flat / 8].slot[flat % 8];
  }

  std::shared_ptr<const HistogramBuckets> buckets_;
  // Per shard: buckets_->size() + 1 bucket counts, then the sum; rounded up to whole lines.
  size_t stride_;
  std::unique_ptr<Line[]> lines_;
};

}  // namespace brigade::telemetry

#endif  // BRIGADE_TELEMETRY_HISTOGRAM_H_
