#include "tools/loadgen/latency_histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace brigade::loadgen {
namespace {

constexpr int64_t kSubBuckets = int64_t{1} << LatencyHistogram::kSubBucketBits;
// Exact buckets [0, kSubBuckets), then kSubBuckets per exponent kSubBucketBits..kMaxExponent-1.
constexpr int kBucketCount = static_cast<int>(
    kSubBuckets * (LatencyHistogram::kMaxExponent - LatencyHistogram::kSubBucketBits + 1));

}  // namespace

LatencyHistogram::LatencyHistogram() : buckets_(kBucketCount, 0) {}

int LatencyHistogram::BucketIndex(int64_t value_ns) {
  if (value_ns < kSubBuckets) return static_cast<int>(value_ns);
  // exponent = floor(log2(value)) >= kSubBucketBits
  const int exponent = 63 - std::countl_zero(static_cast<uint64_t>(value_ns));
  const int shift = exponent - kSubBucketBits;
  const int64_t sub = (value_ns >> shift) - kSubBuckets;  // [0, kSubBuckets)
  return static_cast<int>(kSubBuckets * (shift + 1) + sub);
}

int64_t LatencyHistogram::BucketMiddle(int index) {
  if (index < kSubBuckets) return index;
  const int shift = index / static_cast<int>(kSubBuckets) - 1;
  const int64_t sub = index % kSubBuckets;
  const int64_t low = (kSubBuckets + sub) << shift;
  const int64_t width = int64_t{1} << shift;
  return low + width / 2;
}

void LatencyHistogram::Record(int64_t value_ns) {
  value_ns = std::clamp<int64_t>(value_ns, 0, kMaxValueNs);
  ++buckets_[BucketIndex(value_ns)];
  if (count_ == 0 || value_ns < min_ns_) min_ns_ = value_ns;
  if (value_ns > max_ns_) max_ns_ = value_ns;
  ++count_;
  sum_ns_ += value_ns;
}

void LatencyHistogram::Merge(const LatencyHistogram& other) {
  if (other.count_ == 0) return;
  for (int i = 0; i < kBucketCount; ++i) buckets_[i] += other.buckets_[i];
  min_ns_ = count_ == 0 ? other.min_ns_ : std::min(min_ns_, other.min_ns_);
  max_ns_ = std::max(max_ns_, other.max_ns_);
  count_ += other.count_;
  sum_ns_ += other.sum_ns_;
}

void LatencyHistogram::Reset() {
  std::fill(buckets_.begin(), buckets_.end(), 0);
  count_ = 0;
  sum_ns_ = 0;
  min_ns_ = 0;
  max_ns_ = 0;
}

int64_t LatencyHistogram::PercentileNs(double percentile) const {
  if (count_ == 0) return 0;
  if (percentile <= 0) return min_ns_;
  if (percentile >= 100) return max_ns_;
  const auto rank = std::max<int64_t>(
      1, static_cast<int64_t>(std::ceil(percentile / 100.0 * static_cast<double>(count_))));
  int64_t seen = 0;
  for (int i = 0; i < kBucketCount; ++i) {
    seen += buckets_[i];
    if (seen >= rank) return std::clamp(BucketMiddle(i), min_ns_, max_ns_);
  }
  return max_ns_;
}

}  // namespace brigade::loadgen
