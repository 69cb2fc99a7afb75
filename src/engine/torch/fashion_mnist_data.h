#ifndef BRIGADE_ENGINE_TORCH_FASHION_MNIST_DATA_H_
#define BRIGADE_ENGINE_TORCH_FASHION_MNIST_DATA_H_

// Reads the Fashion-MNIST test split (Debian's dataset-fashion-mnist, gzip-compressed IDX files)
// as the bundled demo models expect it: FP32 images [N,1,28,28] with pixels scaled to [0,1], and
// INT64 labels [N]. Used by the demo-model accuracy test and the TorchScript benchmark, so both
// feed the backend real data rather than zeros.
//
// Stateless; safe from any thread. Failure: NOT_FOUND when the files are missing (callers skip),
// INVALID_ARGUMENT for a file that is not an unsigned-byte IDX file of the expected shape.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/tensor.h"

namespace brigade::engine {

// Where dataset-fashion-mnist installs the files.
inline constexpr std::string_view kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

struct FashionMnistSplit {
  Tensor images;                // FP32 [N,1,28,28], values in [0,1]
  std::vector<int64_t> labels;  // N class indices, 0..9
};

// `prefix` is "t10k" (test) or "train".
absl::StatusOr<FashionMnistSplit> ReadFashionMnist(const std::string& dir,
                                                   const std::string& prefix);

}  // namespace brigade::engine

#endif  // BRIGADE_ENGINE_TORCH_FASHION_MNIST_DATA_H_
