#ifndef BRIGADE_ENGINE_ONNX_LOADER_TENSOR_PROTO_H_
#define BRIGADE_ENGINE_ONNX_LOADER_TENSOR_PROTO_H_

// Conversions between ONNX's TensorProto and Brigade's Tensor, including external data.
//
// External data (`data_location: EXTERNAL`, keys location/offset/length) is read only from files
// inside the model's directory: the location must be relative, and after resolving `..` and
// symbolic links the file must still lie under the directory. Anything else is refused, so a
// model file cannot make the server read /etc/passwd or a neighbour's weights.
//
// Every size in the proto is checked against the shape before a byte is copied: a hostile file
// gets INVALID_ARGUMENT (naming the tensor and the mismatch), never an out-of-bounds read.
// Thread safety: free functions without shared state.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "core/data_type.h"
#include "core/tensor.h"
#include "engine/onnx/ir/onnx_types.h"
#include "onnx/onnx_pb.h"

namespace brigade::engine::onnx {

// Reads `proto` into a tensor. `model_dir` is the directory external data must live in; empty
// refuses external data altogether.
absl::StatusOr<Tensor> TensorFromProto(const ::onnx::TensorProto& proto,
                                       std::string_view model_dir);

// Checks that an external-data location stays inside `model_dir` and returns the resolved path.
absl::StatusOr<std::string> ResolveExternalDataPath(std::string_view model_dir,
                                                    std::string_view location);

// Writes `tensor` into `proto` as raw data (for tests and tools that build models).
void TensorToProto(const Tensor& tensor, std::string_view name, ::onnx::TensorProto* proto);

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_LOADER_TENSOR_PROTO_H_
