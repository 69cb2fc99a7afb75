#include "engine/onnx/loader/tensor_proto.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "core/plain_file.h"
#include "core/status_macros.h"
#include "core/strings.h"

namespace brigade::engine::onnx {
namespace {

namespace fs = std::filesystem;
using ::onnx::TensorProto;

absl::Status Mismatch(const TensorProto& proto, std::string_view what, size_t got, size_t want) {
  return absl::InvalidArgumentError(
      StrCat("tensor '", proto.name(), "': ", what, " holds ", got, " but its shape needs ", want));
}

// Copies `count` elements from a repeated proto field into `out`, converting each.
template <typename Out, typename Field>
void CopyField(const Field& field, Out* out) {
  for (int i = 0; i < field.size(); ++i) out[i] = static_cast<Out>(field.Get(i));
}

absl::StatusOr<std::string> ReadExternal(const TensorProto& proto, std::string_view model_dir,
                                         size_t byte_size) {
  std::string location;
  int64_t offset = 0;
  int64_t length = -1;
  for (const auto& entry : proto.external_data()) {
    if (entry.key() == "location") {
      location = entry.value();
    } else if (entry.key() == "offset" || entry.key() == "length") {
      int64_t value = 0;
      if (!ParseInteger(entry.value(), &value) || value < 0) {
        return absl::InvalidArgumentError(StrCat("tensor '", proto.name(), "': external data ",
                                                 entry.key(), " '", entry.value(),
                                                 "' is not a non-negative integer"));
      }
      (entry.key() == "offset" ? offset : length) = value;
    }
  }
  if (location.empty()) {
    return absl::InvalidArgumentError(
        StrCat("tensor '", proto.name(), "': external data without a location"));
  }
  BRIGADE_ASSIGN_OR_RETURN(std::string path, ResolveExternalDataPath(model_dir, location));
  std::error_code error;
  const uintmax_t file_size = fs::file_size(path, error);
  if (error) {
    return absl::NotFoundError(StrCat("tensor '", proto.name(), "': cannot read external data '",
                                      location, "': ", error.message()));
  }
  if (length >= 0 && static_cast<size_t>(length) != byte_size) {
    return Mismatch(proto, "external data length", static_cast<size_t>(length), byte_size);
  }
  if (static_cast<uintmax_t>(offset) > file_size || file_size - offset < byte_size) {
    return absl::InvalidArgumentError(StrCat("tensor '", proto.name(), "': external data '",
                                             location, "' is ", file_size, " bytes, too short for ",
                                             byte_size, " bytes at offset ", offset));
  }
  std::ifstream file(path, std::ios::binary);
  std::string bytes(byte_size, '\0');
  file.seekg(offset);
  file.read(bytes.data(), static_cast<std::streamsize>(byte_size));
  if (!file) {
    return absl::DataLossError(
        StrCat("tensor '", proto.name(), "': reading external data '", location, "' failed"));
  }
  return bytes;
}

// Raw bytes may hold any value; a bool must hold 0 or 1, so any non-zero byte becomes 1.
void NormalizeBools(Tensor* tensor) {
  if (tensor->dtype() != DataType::kBool) return;
  for (std::byte& b : std::span(tensor->mutable_data(), tensor->byte_size())) {
    b = b != std::byte{0} ? std::byte{1} : std::byte{0};
  }
}

}  // namespace

absl::StatusOr<std::string> ResolveExternalDataPath(std::string_view model_dir,
                                                    std::string_view location) {
  if (model_dir.empty()) {
    return absl::InvalidArgumentError(
        StrCat("external data '", location, "' is not allowed for a model without a directory"));
  }
  // The canonical-prefix check every config- or model-named path goes through: neither "../"
  // nor a link inside the directory pointing outside it gets past it.
  absl::StatusOr<fs::path> resolved = ResolveInsideDir(fs::path(model_dir), location);
  if (!resolved.ok()) {
    return absl::Status(resolved.status().code(),
                        StrCat("external data location ", resolved.status().message()));
  }
  return resolved->string();
}

absl::StatusOr<Tensor> TensorFromProto(const TensorProto& proto, std::string_view model_dir) {
  const std::optional<DataType> dtype = FromOnnxDataType(proto.data_type());
  if (!dtype.has_value()) {
    return absl::UnimplementedError(StrCat("tensor '", proto.name(), "': ONNX data type ",
                                           proto.data_type(), " is not supported"));
  }
  Shape shape;
  for (int64_t dim : proto.dims()) {
    if (dim < 0) {
      return absl::InvalidArgumentError(
          StrCat("tensor '", proto.name(), "': negative dimension ", dim));
    }
    shape.push_back(dim);
  }
  auto count_or = ElementCount(shape);
  if (!count_or.ok()) {
    return absl::InvalidArgumentError(
        StrCat("tensor '", proto.name(), "': ", count_or.status().message()));
  }
  const auto count = static_cast<size_t>(*count_or);

  if (*dtype == DataType::kBytes) {
    if (static_cast<size_t>(proto.string_data_size()) != count) {
      return Mismatch(proto, "string_data", static_cast<size_t>(proto.string_data_size()), count);
    }
    std::vector<std::string> strings(proto.string_data().begin(), proto.string_data().end());
    return Tensor::FromStrings(std::move(shape), strings);
  }

  const size_t element = DataTypeSize(*dtype);
  if (count > kMaxTensorBytes / element) {
    return absl::InvalidArgumentError(
        StrCat("tensor '", proto.name(), "': ", ShapeToString(shape), " is too large"));
  }
  const size_t byte_size = count * element;

  if (proto.data_location() == TensorProto::EXTERNAL) {
    BRIGADE_ASSIGN_OR_RETURN(std::string bytes, ReadExternal(proto, model_dir, byte_size));
    BRIGADE_ASSIGN_OR_RETURN(
        Tensor tensor, Tensor::Copy(*dtype, std::move(shape), std::as_bytes(std::span(bytes))));
    NormalizeBools(&tensor);
    return tensor;
  }
  if (proto.has_raw_data()) {
    const std::string& raw = proto.raw_data();
    if (raw.size() != byte_size) return Mismatch(proto, "raw_data (bytes)", raw.size(), byte_size);
    BRIGADE_ASSIGN_OR_RETURN(Tensor tensor,
                             Tensor::Copy(*dtype, std::move(shape), std::as_bytes(std::span(raw))));
    NormalizeBools(&tensor);
    return tensor;
  }

  BRIGADE_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Zeros(*dtype, std::move(shape)));
  auto check = [&](int size, std::string_view field) -> absl::Status {
    if (static_cast<size_t>(size) != count) {
      return Mismatch(proto, field, static_cast<size_t>(size), count);
    }
    return absl::OkStatus();
  };
  std::byte* out = tensor.mutable_data();
  switch (*dtype) {
    case DataType::kFp32:
      BRIGADE_RETURN_IF_ERROR(check(proto.float_data_size(), "float_data"));
      CopyField(proto.float_data(), reinterpret_cast<float*>(out));
      break;
    case DataType::kFp64:
      BRIGADE_RETURN_IF_ERROR(check(proto.double_data_size(), "double_data"));
      CopyField(proto.double_data(), reinterpret_cast<double*>(out));
      break;
    case DataType::kInt64:
      BRIGADE_RETURN_IF_ERROR(check(proto.int64_data_size(), "int64_data"));
      CopyField(proto.int64_data(), reinterpret_cast<int64_t*>(out));
      break;
    case DataType::kUint32:
      BRIGADE_RETURN_IF_ERROR(check(proto.uint64_data_size(), "uint64_data"));
      CopyField(proto.uint64_data(), reinterpret_cast<uint32_t*>(out));
      break;
    case DataType::kUint64:
      BRIGADE_RETURN_IF_ERROR(check(proto.uint64_data_size(), "uint64_data"));
      CopyField(proto.uint64_data(), reinterpret_cast<uint64_t*>(out));
      break;
    case DataType::kInt32:
      BRIGADE_RETURN_IF_ERROR(check(proto.int32_data_size(), "int32_data"));
      CopyField(proto.int32_data(), reinterpret_cast<int32_t*>(out));
      break;
    case DataType::kInt16:
      BRIGADE_RETURN_IF_ERROR(check(proto.int32_data_size(), "int32_data"));
      CopyField(proto.int32_data(), reinterpret_cast<int16_t*>(out));
      break;
    case DataType::kUint16:
    case DataType::kFp16:
    case DataType::kBf16:
      // 16-bit floats travel as their bit patterns in int32_data.
      BRIGADE_RETURN_IF_ERROR(check(proto.int32_data_size(), "int32_data"));
      CopyField(proto.int32_data(), reinterpret_cast<uint16_t*>(out));
      break;
    case DataType::kInt8:
      BRIGADE_RETURN_IF_ERROR(check(proto.int32_data_size(), "int32_data"));
      CopyField(proto.int32_data(), reinterpret_cast<int8_t*>(out));
      break;
    case DataType::kUint8:
      BRIGADE_RETURN_IF_ERROR(check(proto.int32_data_size(), "int32_data"));
      CopyField(proto.int32_data(), reinterpret_cast<uint8_t*>(out));
      break;
    case DataType::kBool: {
      BRIGADE_RETURN_IF_ERROR(check(proto.int32_data_size(), "int32_data"));
      auto* b = reinterpret_cast<bool*>(out);
      for (int i = 0; i < proto.int32_data_size(); ++i) b[i] = proto.int32_data(i) != 0;
      break;
    }
    case DataType::kBytes:
    case DataType::kInvalid:
      break;
  }
  return tensor;
}

void TensorToProto(const Tensor& tensor, std::string_view name, TensorProto* proto) {
  proto->Clear();
  proto->set_name(std::string(name));
  proto->set_data_type(ToOnnxDataType(tensor.dtype()));
  for (int64_t dim : tensor.shape()) proto->add_dims(dim);
  if (tensor.dtype() == DataType::kBytes) {
    auto strings = tensor.StringValues();
    if (strings.ok()) {
      for (std::string_view s : *strings) proto->add_string_data(std::string(s));
    }
    return;
  }
  proto->set_raw_data(reinterpret_cast<const char*>(tensor.data()), tensor.byte_size());
}

}  // namespace brigade::engine::onnx
