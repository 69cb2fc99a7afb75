#ifndef BRIGADE_ENGINE_ONNX_IR_ONNX_TYPES_H_
#define BRIGADE_ENGINE_ONNX_IR_ONNX_TYPES_H_

// ONNX element-type codes (TensorProto.DataType) and their mapping to Brigade's DataType.
// Kept free of protobuf headers so kernels (Cast's `to` attribute) can use it.

#include <cstdint>
#include <optional>

#include "core/data_type.h"

namespace brigade::engine::onnx {

// TensorProto.DataType → DataType; nullopt for types Brigade has no counterpart for (complex
// numbers, float8).
std::optional<DataType> FromOnnxDataType(int64_t onnx_type);
// DataType → TensorProto.DataType (0 for kInvalid).
int32_t ToOnnxDataType(DataType type);

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_IR_ONNX_TYPES_H_
