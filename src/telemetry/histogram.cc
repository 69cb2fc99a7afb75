#include "telemetry/histogram.h"

#include <algorithm>
#include <limits>

#include "core/strings.h"
#include "telemetry/metric_shard.h"

namespace brigade::telemetry {

absl::StatusOr<HistogramBuckets> HistogramBuckets::Create(std::vector<int64_t> upper_bounds,
                                                          int64_t exposition_divisor) {
  if (upper_bounds.empty()) {
    return absl::InvalidArgumentError("histogram buckets: no upper bounds");
  }
  for (size_t i = 1; i < upper_bounds.size(); ++i) {
    if (upper_bounds[i] <= upper_bounds[i - 1]) {
      return absl::InvalidArgumentError(
          StrCat("histogram buckets: upper bounds must increase strictly, but bound ", i, " (",
                 upper_bounds[i], ") follows ", upper_bounds[i - 1]));
    }
  }
  if (exposition_divisor <= 0) {
    return absl::InvalidArgumentError(
        StrCat("histogram buckets: exposition_divisor must be positive, got ", exposition_divisor));
  }
  return HistogramBuckets(std::move(upper_bounds), exposition_divisor);
}

const HistogramBuckets& HistogramBuckets::LatencyNs() {
  static const HistogramBuckets buckets = [] {
    std::vector<int64_t> bounds;
    for (int64_t decade = 100; decade <= 1'000'000'000; decade *= 10) {
      for (int64_t step : {1, 2, 5}) bounds.push_back(decade * step);
    }
    bounds.push_back(10'000'000'000);
    return HistogramBuckets(std::move(bounds), 1'000'000'000);
  }();
  return buckets;
}

const HistogramBuckets& HistogramBuckets::PowersOfTwo() {
  static const HistogramBuckets buckets = [] {
    std::vector<int64_t> bounds;
    for (int64_t size = 1; size <= 1024; size *= 2) bounds.push_back(size);
    return HistogramBuckets(std::move(bounds), 1);
  }();
  return buckets;
}

size_t HistogramBuckets::Index(int64_t value) const {
  return static_cast<size_t>(std::lower_bound(upper_bounds_.begin(), upper_bounds_.end(), value) -
                             upper_bounds_.begin());
}

uint64_t HistogramSnapshot::count() const {
  uint64_t total = 0;
  for (uint64_t n : counts) total += n;
  return total;
}

void HistogramSnapshot::Merge(const HistogramSnapshot& other) {
  if (counts.empty()) counts.assign(other.counts.size(), 0);
  for (size_t i = 0; i < counts.size() && i < other.counts.size(); ++i) {
    counts[i] += other.counts[i];
  }
  sum += other.sum;
}

double EstimateQuantile(const HistogramBuckets& buckets, const HistogramSnapshot& snapshot,
                        double q) {
  const uint64_t total = snapshot.count();
  if (total == 0 || snapshot.counts.size() != buckets.size() + 1) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  q = std::clamp(q, 0.0, 1.0);
  const double rank = q * static_cast<double>(total);
  const std::span<const int64_t> bounds = buckets.upper_bounds();
  uint64_t below = 0;  // observations in buckets before the current one
  for (size_t i = 0; i < snapshot.counts.size(); ++i) {
    const uint64_t in_bucket = snapshot.counts[i];
    if (in_bucket == 0 || static_cast<double>(below + in_bucket) < rank) {
      below += in_bucket;
      continue;
    }
    if (i == bounds.size()) return static_cast<double>(bounds.back());  // +Inf bucket
    const double lower = i == 0 ? 0.0 : static_cast<double>(bounds[i - 1]);
    const double upper = static_cast<double>(bounds[i]);
    return lower +
           (upper - lower) * (rank - static_cast<double>(below)) / static_cast<double>(in_bucket);
  }
  return static_cast<double>(bounds.back());
}

Histogram::Histogram(std::shared_ptr<const HistogramBuckets> buckets)
    : buckets_(std::move(buckets)), stride_((buckets_->size() + 2 + 7) / 8 * 8) {
  lines_ = std::make_unique<Line[]>(stride_ / 8 * static_cast<size_t>(MetricShardCount()));
  for (size_t i = 0; i < stride_ / 8 * static_cast<size_t>(MetricShardCount()); ++i) {
    for (auto& slot : lines_[i].slot) slot.store(0, std::memory_order_relaxed);
  }
}

void Histogram::Observe(int64_t value) {
  if (value < 0) value = 0;
  const int shard = ThisThreadMetricShard();
  Slot(shard, buckets_->Index(value)).fetch_add(1, std::memory_order_relaxed);
  Slot(shard, buckets_->size() + 1)
      .fetch_add(static_cast<uint64_t>(value), std::memory_order_relaxed);
}

HistogramSnapshot Histogram::Snapshot() const {
  HistogramSnapshot out;
  out.counts.assign(buckets_->size() + 1, 0);
  for (int shard = 0; shard < MetricShardCount(); ++shard) {
    for (size_t i = 0; i < out.counts.size(); ++i) {
      out.counts[i] += Slot(shard, i).load(std::memory_order_relaxed);
    }
    out.sum += Slot(shard, buckets_->size() + 1).load(std::memory_order_relaxed);
  }
  return out;
}

}  // namespace brigade::telemetry
