#ifndef BRIGADE_OPTIMIZE_EVALUATE_H_
#define BRIGADE_OPTIMIZE_EVALUATE_H_

// How far a quantized model's outputs are from the fp32 model's on the same rows: top-1
// agreement, cosine similarity and largest absolute difference of the output rows, and, with
// labels, each model's top-1 accuracy. The accuracy gate's "drop" is in points: the fp32 top-1
// minus the candidate's with labels, 100 − agreement % without.
//
// Thread safety: free functions.

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/tensor.h"

namespace brigade::optimize {

struct Comparison {
  int64_t rows = 0;
  double top1_agreement = 0;  // fraction of rows with the same arg-max
  double mean_cosine = 0;
  double min_cosine = 0;
  double max_abs_diff = 0;
  std::optional<double> reference_top1;  // fractions, with labels
  std::optional<double> candidate_top1;

  // Accuracy drop in points (see above).
  double drop_points() const;
};

// Compares `reference` and `candidate`, fp32 [N, ...] each (rows flattened); `labels` (may be
// empty) holds the class of each row. Rows beyond the shorter of the two (and of `labels` when
// given) are ignored.
Comparison Compare(const Tensor& reference, const Tensor& candidate,
                   std::span<const int64_t> labels);

}  // namespace brigade::optimize

#endif  // BRIGADE_OPTIMIZE_EVALUATE_H_
