#ifndef BRIGADE_TOOLS_LOADGEN_SAMPLE_ORDER_H_
#define BRIGADE_TOOLS_LOADGEN_SAMPLE_ORDER_H_

// Which input sample each request of a benchmark sends.
//
//   cycle  each worker walks the samples in order from its own offset (the default: every sample
//          equally often, no randomness in the request loop)
//   zipf   each request draws a sample from a Zipf distribution: the sample of rank k (0-based)
//          is sent with probability (k + 1)^-s / H(n, s), H(n, s) = Σ_{i=1..n} i^-s. Models a
//          popularity-skewed workload such as the one a response cache sees: with n = 10,000 and
//          s = 1.0 the most popular sample is ~10% of the requests and the top 100 ~53%.
//
// ZipfDistribution precomputes the cumulative distribution once (n doubles) and draws in
// O(log n) from 64 random bits, so the request loop only advances a per-worker generator and
// does one binary search. Draws are a pure function of the bits, hence reproducible from a seed.
//
// Thread safety: a ZipfDistribution is immutable after Create() and may be shared by every
// worker; each worker owns its SampleRng.

#include <cstddef>
#include <cstdint>
#include <random>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace brigade::loadgen {

enum class SampleOrder { kCycle, kZipf };

// "cycle", "zipf".
std::string_view SampleOrderName(SampleOrder order);

using SampleRng = std::mt19937_64;

class ZipfDistribution {
 public:
  // INVALID_ARGUMENT unless n >= 1 and 0 <= s <= 10 (s = 0 is uniform).
  static absl::StatusOr<ZipfDistribution> Create(size_t n, double s);

  // A rank in [0, n).
  size_t Sample(SampleRng& rng) const { return RankOf(rng()); }
  // The rank that 64 random bits map to (inverse CDF of their top 53 bits read as u in [0, 1)).
  size_t RankOf(uint64_t random_bits) const;
  // P(rank).
  double Probability(size_t rank) const;

  size_t size() const { return cdf_.size(); }
  double exponent() const { return s_; }

 private:
  ZipfDistribution(std::vector<double> cdf, double s) : cdf_(std::move(cdf)), s_(s) {}

  // cdf_[k] = P(rank <= k); the last entry is exactly 1.
  std::vector<double> cdf_;
  double s_ = 1.0;
};

}  // namespace brigade::loadgen

#endif  // BRIGADE_TOOLS_LOADGEN_SAMPLE_ORDER_H_
