#ifndef BRIGADE_PROCESS_CLASSIFY_H_
#define BRIGADE_PROCESS_CLASSIFY_H_

// Post-processing of a classifier's scores, row by row: a batch of `rows` x `classes` float32
// values, row-major (what a model's [batch, classes] output holds).
//
//   Softmax    exp(x - max) / sum, per row, in double accumulation (so a row of 1000 logits
//              sums to 1 within float rounding); a row holding NaN gives NaN throughout.
//   TopK       the k largest values of each row and their class indices, largest first; ties
//              go to the lower index; NaN ranks above every number (as torch.topk).
//   Argmax     the index of each row's largest value (TopK with k = 1).
//   Threshold  per row, the classes whose score is >= threshold (multi-label), in index order.
//
// Thread safety: pure functions. Failure: INVALID_ARGUMENT when the span sizes do not match
// rows x classes (or rows x k), classes < 1, or k is not in 1..classes.

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace brigade::process {

absl::Status Softmax(std::span<const float> scores, int64_t classes, std::span<float> out);

// `values` and `indices` hold rows x k elements.
absl::Status TopK(std::span<const float> scores, int64_t classes, int64_t k,
                  std::span<float> values, std::span<int64_t> indices);

absl::Status Argmax(std::span<const float> scores, int64_t classes, std::span<int64_t> indices);

absl::StatusOr<std::vector<std::vector<int64_t>>> Threshold(std::span<const float> scores,
                                                            int64_t classes, float threshold);

}  // namespace brigade::process

#endif  // BRIGADE_PROCESS_CLASSIFY_H_
