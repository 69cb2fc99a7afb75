#ifndef BRIGADE_ENGINE_TORCH_TORCH_TENSOR_H_
#define BRIGADE_ENGINE_TORCH_TORCH_TENSOR_H_

// Zero-copy conversion between Brigade tensors and libtorch tensors, for the TorchScript backend.
//
//   ToTorch(Tensor)      an at::Tensor over the same bytes. The at::Tensor's storage holds a
//                        reference to the Brigade tensor's storage, so even an output that
//                        aliases an input (an identity model) can never dangle.
//   FromTorch(at::Tensor) a Brigade Tensor over the torch tensor's bytes (made contiguous first,
//                        which copies only when the model produced a strided view). The Brigade
//                        tensor owns a reference to the at::Tensor, which keeps them alive.
//
// Type map: BOOL, UINT8, INT8, INT16, INT32, INT64, FP16, BF16, FP32, FP64 have torch
// equivalents; UINT16/32/64 and BYTES do not (libtorch 1.13), and are refused.
//
// Ownership and threads: a wrapped input aliases memory another component may share, so a model
// that writes into its inputs in place writes into that memory; TorchScript models served here
// must treat inputs as read-only (as Triton's PyTorch backend also assumes).
// Failure: INVALID_ARGUMENT naming the unsupported type; no exception escapes these functions.

#include <optional>

#include "absl/status/statusor.h"
#include "core/data_type.h"
#include "core/tensor.h"
#include "torch/script.h"

namespace brigade::engine {

// The torch scalar type of `type`; nullopt when libtorch has none.
std::optional<c10::ScalarType> ToTorchScalarType(DataType type);

// The Brigade type of `type`; nullopt for types Brigade does not serve (complex, quantized).
std::optional<DataType> FromTorchScalarType(c10::ScalarType type);

// Wraps `tensor` as a CPU at::Tensor without copying. `tensor` must be non-empty and of a
// fixed-size type with a torch equivalent.
absl::StatusOr<at::Tensor> ToTorch(const Tensor& tensor);

// Wraps a CPU at::Tensor as a Brigade Tensor without copying (see above for the contiguity copy).
absl::StatusOr<Tensor> FromTorch(at::Tensor tensor);

}  // namespace brigade::engine

#endif  // BRIGADE_ENGINE_TORCH_TORCH_TENSOR_H_
