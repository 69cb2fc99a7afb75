#ifndef BRIGADE_OPTIMIZE_DATASET_H_
#define BRIGADE_OPTIMIZE_DATASET_H_

// Data sets for calibration and evaluation, read from the two formats quantization users have at
// hand:
//
//   .npy  NumPy's format (version 1-3), C order, little-endian float32/float64/uint8/int8/int32/
//         int64 (`np.save("calib.npy", x)`); the first dimension counts samples.
//   IDX   LeCun's MNIST format (Debian's dataset-mnist and dataset-fashion-mnist), gzip-compressed
//         or not: type 0x08 (uint8) images [N, rows, cols] or labels [N].
//
// Samples become fp32: floating-point data as it is, integer data times `scale` (1/255 for uint8
// by default, the [0, 1] pixels the demo models take). Labels are integers from a 1-D array.
//
// Errors: NOT_FOUND naming the file when it cannot be read; INVALID_ARGUMENT naming the file and
// what is wrong (bad magic, unsupported dtype, a size that does not match the header, no samples).
// Thread safety: free functions.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/tensor.h"

namespace brigade::optimize {

struct DatasetOptions {
  // Factor applied to integer data on conversion to fp32 (uint8 pixels → [0, 1] by default).
  double integer_scale = 1.0 / 255.0;
  // Keep at most this many samples (the first ones); 0 keeps all.
  int64_t max_samples = 0;
};

// Reads samples from `path` (.npy or IDX, chosen by content, not name) as an fp32 tensor whose
// first dimension is the sample count (>= 1).
absl::StatusOr<Tensor> LoadSamples(const std::string& path, const DatasetOptions& options = {});

// Reads integer labels from `path` (a 1-D .npy array or an IDX1 file).
absl::StatusOr<std::vector<int64_t>> LoadLabels(const std::string& path, int64_t max_samples = 0);

// Reshapes `samples` [N, ...] to the model input's per-sample shape `sample_shape` (dimensions
// after the batch; -1 dims are taken from the data when there is exactly one): e.g. IDX images
// [N, 28, 28] for an input [batch, 1, 28, 28]. INVALID_ARGUMENT naming `what` (the file) and
// `input` when the element counts differ.
absl::StatusOr<Tensor> FitToInput(const Tensor& samples, const std::vector<int64_t>& sample_shape,
                                  const std::string& what, const std::string& input);

}  // namespace brigade::optimize

#endif  // BRIGADE_OPTIMIZE_DATASET_H_
