#ifndef BRIGADE_TOOLS_ANALYZE_EVAL_SET_H_
#define BRIGADE_TOOLS_ANALYZE_EVAL_SET_H_

// EvalSet: the examples a variant's accuracy is measured on (and the inputs the load generator
// sends), with their labels when the set is labelled.
//
// Files, chosen by content for IDX and by the ".npy" suffix for NumPy:
//   inputs   IDX (gzip-compressed or not; e.g. t10k-images-idx3-ubyte.gz) or .npy, examples along
//            the first dimension: [N, ...];
//   labels   IDX or .npy of an integer type with N elements ([N] or [N, 1]); optional — without
//            labels, accuracy is agreement with a reference variant (accuracy.h).
//
// Examples are converted to the model's input type when requests are built (EvalRows): each value
// is multiplied by `scale` (DefaultScale: 1/255 from UINT8 to a floating type, as image pixels in
// [0, 255] become [0, 1], else 1) and each example reshaped to the model's row shape (element
// counts must agree, so [28, 28] images feed a [1, 28, 28] input).
//
// Thread safety: an EvalSet is an immutable value after loading; EvalRows is pure. Failure:
// INVALID_ARGUMENT naming the file and the mismatch; NOT_FOUND for unreadable files.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/tensor.h"

namespace brigade::analyze {

struct EvalSetOptions {
  std::string inputs_path{};
  // Empty: unlabelled.
  std::string labels_path{};
  // Use the first `limit` examples; 0 = all.
  int64_t limit = 0;
};

struct EvalSet {
  // [N, ...] as read from the file.
  Tensor inputs{};
  // N labels, or empty when unlabelled.
  std::vector<int64_t> labels{};
  // "t10k-images-idx3-ubyte.gz (10000 × [28,28] UINT8), labels t10k-labels-idx1-ubyte.gz".
  std::string description{};

  int64_t size() const { return inputs.empty() ? 0 : inputs.shape()[0]; }
  bool labelled() const { return !labels.empty(); }
};

absl::StatusOr<EvalSet> LoadEvalSet(const EvalSetOptions& options);

// 1/255 for UINT8 examples fed to an FP32 or FP64 input, 1 otherwise.
double DefaultScale(DataType from, DataType to);

// Examples [begin, begin + count) as one tensor of `dtype` (FP32, FP64 or an integer type) and
// shape [count, row_shape...] (or exactly `row_shape` when `batched` is false and count is 1).
absl::StatusOr<Tensor> EvalRows(const EvalSet& set, int64_t begin, int64_t count, DataType dtype,
                                double scale, const Shape& row_shape, bool batched);

}  // namespace brigade::analyze

#endif  // BRIGADE_TOOLS_ANALYZE_EVAL_SET_H_
