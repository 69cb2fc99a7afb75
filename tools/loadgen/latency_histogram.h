#ifndef BRIGADE_TOOLS_LOADGEN_LATENCY_HISTOGRAM_H_
#define BRIGADE_TOOLS_LOADGEN_LATENCY_HISTOGRAM_H_

// LatencyHistogram: a log-linear histogram of durations in nanoseconds (the HdrHistogram idea):
// values below 2^kSubBucketBits ns are counted exactly; above, each power of two is split into
// 2^kSubBucketBits equal buckets, so a percentile is reported within 1/2^(kSubBucketBits+1)
// (0.4%) of a recorded value. Exact count, sum, min and max are kept beside the buckets.
//
// Recording is a few instructions and never allocates (the bucket array is allocated once), so
// each load-generator worker records into its own histogram and the results are merged after
// the run. Values above kMaxValueNs (about 18 minutes) are clamped; negative values count as 0.
//
// Percentile(p) returns the value at rank ceil(p/100 * count) (the nearest-rank definition),
// reported as the middle of its bucket clamped to [min, max]; Percentile(0) is min and
// Percentile(100) is max.
//
// Thread safety: none; one writer, merge after the writer is done.

#include <cstdint>
#include <vector>

namespace brigade::loadgen {

class LatencyHistogram {
 public:
  static constexpr int kSubBucketBits = 7;
  static constexpr int kMaxExponent = 40;
  static constexpr int64_t kMaxValueNs = (int64_t{1} << kMaxExponent) - 1;

  LatencyHistogram();

  void Record(int64_t value_ns);
  void Merge(const LatencyHistogram& other);
  void Reset();

  int64_t count() const { return count_; }
  int64_t min_ns() const { return count_ == 0 ? 0 : min_ns_; }
  int64_t max_ns() const { return max_ns_; }
  double mean_ns() const { return count_ == 0 ? 0.0 : static_cast<double>(sum_ns_) / count_; }
  // 0 when empty.
  int64_t PercentileNs(double percentile) const;

 private:
  static int BucketIndex(int64_t value_ns);
  // The value reported for a bucket: exact below 2^kSubBucketBits, else its middle.
  static int64_t BucketMiddle(int index);

  std::vector<int64_t> buckets_;
  int64_t count_ = 0;
  int64_t sum_ns_ = 0;
  int64_t min_ns_ = 0;
  int64_t max_ns_ = 0;
};

}  // namespace brigade::loadgen

#endif  // BRIGADE_TOOLS_LOADGEN_LATENCY_HISTOGRAM_H_
