#include "tools/loadgen/sample_order.h"

#include <algorithm>
#include <cmath>

#include "core/strings.h"

namespace brigade::loadgen {

std::string_view SampleOrderName(SampleOrder order) {
  return order == SampleOrder::kZipf ? "zipf" : "cycle";
}

absl::StatusOr<ZipfDistribution> ZipfDistribution::Create(size_t n, double s) {
  if (n < 1) return absl::InvalidArgumentError("a Zipf distribution needs at least one sample");
  if (!(s >= 0 && s <= 10)) {
    return absl::InvalidArgumentError(StrCat("Zipf exponent ", s, " is not in [0, 10]"));
  }
  std::vector<double> cdf(n);
  double sum = 0;
  for (size_t k = 0; k < n; ++k) {
    sum += std::pow(static_cast<double>(k + 1), -s);
    cdf[k] = sum;
  }
  for (double& value : cdf) value /= sum;
  cdf.back() = 1.0;  // no rounding gap at the top: every u < 1 finds a rank
  return ZipfDistribution(std::move(cdf), s);
}

size_t ZipfDistribution::RankOf(uint64_t random_bits) const {
  const double u = static_cast<double>(random_bits >> 11) * 0x1.0p-53;  // [0, 1)
  const auto it = std::upper_bound(cdf_.begin(), cdf_.end(), u);
  return std::min(static_cast<size_t>(it - cdf_.begin()), cdf_.size() - 1);
}

double ZipfDistribution::Probability(size_t rank) const {
  if (rank >= cdf_.size()) return 0;
  return rank == 0 ? cdf_[0] : cdf_[rank] - cdf_[rank - 1];
}

}  // namespace brigade::loadgen
