#include "optimize/evaluate.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace brigade::optimize {

double Comparison::drop_points() const {
  if (reference_top1.has_value() && candidate_top1.has_value()) {
    return (*reference_top1 - *candidate_top1) * 100.0;
  }
  return (1.0 - top1_agreement) * 100.0;
}

Comparison Compare(const Tensor& reference, const Tensor& candidate,
                   std::span<const int64_t> labels) {
  Comparison c;
  if (reference.shape().empty() || candidate.shape().empty()) return c;
  int64_t rows = std::min(reference.shape()[0], candidate.shape()[0]);
  if (!labels.empty()) rows = std::min<int64_t>(rows, static_cast<int64_t>(labels.size()));
  if (rows <= 0 || reference.num_elements() / reference.shape()[0] !=
                       candidate.num_elements() / candidate.shape()[0]) {
    return c;
  }
  const int64_t width = reference.num_elements() / reference.shape()[0];
  const std::span<const float> a = reference.values<float>();
  const std::span<const float> b = candidate.values<float>();
  int64_t agree = 0, ref_right = 0, cand_right = 0;
  double cosine_sum = 0;
  c.min_cosine = 1;
  for (int64_t r = 0; r < rows; ++r) {
    const float* x = a.data() + r * width;
    const float* y = b.data() + r * width;
    const int64_t ax = std::max_element(x, x + width) - x;
    const int64_t ay = std::max_element(y, y + width) - y;
    agree += ax == ay;
    if (!labels.empty()) {
      ref_right += ax == labels[static_cast<size_t>(r)];
      cand_right += ay == labels[static_cast<size_t>(r)];
    }
    double dot = 0, xx = 0, yy = 0;
    for (int64_t i = 0; i < width; ++i) {
      dot += static_cast<double>(x[i]) * y[i];
      xx += static_cast<double>(x[i]) * x[i];
      yy += static_cast<double>(y[i]) * y[i];
      c.max_abs_diff = std::max(c.max_abs_diff, static_cast<double>(std::abs(x[i] - y[i])));
    }
    const double cosine = xx > 0 && yy > 0 ? dot / std::sqrt(xx * yy) : (xx == yy ? 1.0 : 0.0);
    cosine_sum += cosine;
    c.min_cosine = std::min(c.min_cosine, cosine);
  }
  c.rows = rows;
  c.top1_agreement = static_cast<double>(agree) / static_cast<double>(rows);
  c.mean_cosine = cosine_sum / static_cast<double>(rows);
  if (!labels.empty()) {
    c.reference_top1 = static_cast<double>(ref_right) / static_cast<double>(rows);
    c.candidate_top1 = static_cast<double>(cand_right) / static_cast<double>(rows);
  }
  return c;
}

}  // namespace brigade::optimize
