#include "engine/onnx/ir/onnx_types.h"

namespace brigade::engine::onnx {
namespace {

// TensorProto.DataType values (onnx.proto).
enum OnnxType : int32_t {
  kUndefined = 0,
  kFloat = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUint32 = 12,
  kUint64 = 13,
  kBfloat16 = 16,
};

}  // namespace

std::optional<DataType> FromOnnxDataType(int64_t onnx_type) {
  switch (onnx_type) {
    case kFloat:
      return DataType::kFp32;
    case kUint8:
      return DataType::kUint8;
    case kInt8:
      return DataType::kInt8;
    case kUint16:
      return DataType::kUint16;
    case kInt16:
      return DataType::kInt16;
    case kInt32:
      return DataType::kInt32;
    case kInt64:
      return DataType::kInt64;
    case kString:
      return DataType::kBytes;
    case kBool:
      return DataType::kBool;
    case kFloat16:
      return DataType::kFp16;
    case kDouble:
      return DataType::kFp64;
    case kUint32:
      return DataType::kUint32;
    case kUint64:
      return DataType::kUint64;
    case kBfloat16:
      return DataType::kBf16;
    default:
      return std::nullopt;
  }
}

int32_t ToOnnxDataType(DataType type) {
  switch (type) {
    case DataType::kFp32:
      return kFloat;
    case DataType::kUint8:
      return kUint8;
    case DataType::kInt8:
      return kInt8;
    case DataType::kUint16:
      return kUint16;
    case DataType::kInt16:
      return kInt16;
    case DataType::kInt32:
      return kInt32;
    case DataType::kInt64:
      return kInt64;
    case DataType::kBytes:
      return kString;
    case DataType::kBool:
      return kBool;
    case DataType::kFp16:
      return kFloat16;
    case DataType::kFp64:
      return kDouble;
    case DataType::kUint32:
      return kUint32;
    case DataType::kUint64:
      return kUint64;
    case DataType::kBf16:
      return kBfloat16;
    case DataType::kInvalid:
      return kUndefined;
  }
  return kUndefined;
}

}  // namespace brigade::engine::onnx
