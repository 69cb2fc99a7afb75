#ifndef BRIGADE_PIPELINE_CLASSIFICATION_H_
#define BRIGADE_PIPELINE_CLASSIFICATION_H_

// Triton's classification extension, the post-processing an output gets when the request asks
// for it with the output parameter `classification: k` (HTTP) or `classification` int64_param
// (gRPC, what tritonclient's class_count sends): instead of the tensor, per batch row the k
// highest-valued classes as BYTES strings "<value>:<index>" or, with a label for the index,
// "<value>:<index>:<label>".
//
//   shape      [rows, C...] with batching (rows = dimension 0), [C...] without; the class axis
//              is the row's elements in order (C... flattened). The answer is [rows, k] or [k].
//   order      by value, compared in the output's own type, highest first; ties by index.
//   k          clipped to the number of classes.
//   value      integers as decimals; FP16, BF16, FP32 and FP64 as std::to_string of the value
//              (six decimals), as Triton writes them.
//   labels     labels[index] when the output's config names a label_filename and the index has
//              a line in it; otherwise the string has no label part.
//
// Pure functions; thread-safe.
// Failure: INVALID_ARGUMENT, naming the output, for k < 1, a BOOL or BYTES output (they have
// no order Triton defines), or a batched output without a batch dimension.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "core/tensor.h"

namespace brigade::pipeline {

// The output parameter that asks for it.
inline constexpr std::string_view kClassificationParameter = "classification";

absl::StatusOr<Tensor> Classify(std::string_view output_name, const Tensor& output, int64_t k,
                                bool batched, std::span<const std::string> labels);

}  // namespace brigade::pipeline

#endif  // BRIGADE_PIPELINE_CLASSIFICATION_H_
