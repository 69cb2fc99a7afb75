#include "engine/torch/torch_tensor.h"

#include <exception>
#include <memory>
#include <utility>

#include "core/strings.h"
#include "engine/torch/torch_error.h"

namespace brigade::engine {

std::optional<c10::ScalarType> ToTorchScalarType(DataType type) {
  switch (type) {
    case DataType::kBool:
      return c10::ScalarType::Bool;
    case DataType::kUint8:
      return c10::ScalarType::Byte;
    case DataType::kInt8:
      return c10::ScalarType::Char;
    case DataType::kInt16:
      return c10::ScalarType::Short;
    case DataType::kInt32:
      return c10::ScalarType::Int;
    case DataType::kInt64:
      return c10::ScalarType::Long;
    case DataType::kFp16:
      return c10::ScalarType::Half;
    case DataType::kBf16:
      return c10::ScalarType::BFloat16;
    case DataType::kFp32:
      return c10::ScalarType::Float;
    case DataType::kFp64:
      return c10::ScalarType::Double;
    case DataType::kUint16:
    case DataType::kUint32:
    case DataType::kUint64:
    case DataType::kBytes:
    case DataType::kInvalid:
      return std::nullopt;
  }
  return std::nullopt;
}

std::optional<DataType> FromTorchScalarType(c10::ScalarType type) {
  switch (type) {
    case c10::ScalarType::Bool:
      return DataType::kBool;
    case c10::ScalarType::Byte:
      return DataType::kUint8;
    case c10::ScalarType::Char:
      return DataType::kInt8;
    case c10::ScalarType::Short:
      return DataType::kInt16;
    case c10::ScalarType::Int:
      return DataType::kInt32;
    case c10::ScalarType::Long:
      return DataType::kInt64;
    case c10::ScalarType::Half:
      return DataType::kFp16;
    case c10::ScalarType::BFloat16:
      return DataType::kBf16;
    case c10::ScalarType::Float:
      return DataType::kFp32;
    case c10::ScalarType::Double:
      return DataType::kFp64;
    default:
      return std::nullopt;
  }
}

absl::StatusOr<at::Tensor> ToTorch(const Tensor& tensor) {
  const std::optional<c10::ScalarType> scalar_type = ToTorchScalarType(tensor.dtype());
  if (!scalar_type) {
    return absl::InvalidArgumentError(
        StrCat("type ", DataTypeName(tensor.dtype()), " has no libtorch equivalent"));
  }
  const Shape& shape = tensor.shape();
  try {
    // from_blob never writes; the const_cast only satisfies its signature (see the header on
    // in-place models). The deleter's capture keeps the Brigade storage alive as long as torch
    // holds the storage, including through outputs that alias this input.
    return torch::from_blob(
        const_cast<std::byte*>(tensor.data()), c10::IntArrayRef(shape.data(), shape.size()),
        [keep_alive = tensor](void*) {},
        torch::TensorOptions().dtype(*scalar_type).device(torch::kCPU));
  } catch (const std::exception& e) {
    return absl::InternalError(StrCat("cannot wrap tensor ", DataTypeName(tensor.dtype()),
                                      ShapeToString(shape),
                                      " for libtorch: ", DescribeTorchException(e)));
  }
}

absl::StatusOr<Tensor> FromTorch(at::Tensor tensor) {
  std::optional<DataType> type;
  Shape shape;
  try {
    if (!tensor.defined()) return absl::InvalidArgumentError("undefined tensor");
    if (!tensor.device().is_cpu()) {
      return absl::InvalidArgumentError(StrCat("tensor on device ", tensor.device().str()));
    }
    type = FromTorchScalarType(tensor.scalar_type());
    if (!type) {
      return absl::InvalidArgumentError(
          StrCat("torch type ", c10::toString(tensor.scalar_type()), " has no Brigade equivalent"));
    }
    tensor = tensor.contiguous();
    shape.assign(tensor.sizes().begin(), tensor.sizes().end());
  } catch (const std::exception& e) {
    return absl::InternalError(StrCat("cannot read torch tensor: ", DescribeTorchException(e)));
  }
  void* data = tensor.data_ptr();
  const size_t byte_size = static_cast<size_t>(tensor.numel()) * tensor.element_size();
  auto owner = std::make_shared<at::Tensor>(std::move(tensor));
  return Tensor::View(*type, std::move(shape), data, byte_size, std::move(owner));
}

}  // namespace brigade::engine
