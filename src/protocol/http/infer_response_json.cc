#include "protocol/http/infer_response_json.h"

#include <limits>
#include <type_traits>

#include "core/status_macros.h"
#include "core/strings.h"
#include "protocol/http/json_dom_reader.h"
#include "protocol/http/json_tensor_data.h"

namespace brigade::protocol::http {
namespace {

// A rough upper bound of the JSON size, so the string grows once for typical responses.
size_t EstimateJsonBytes(const InferResponse& response) {
  size_t bytes = 128 + response.id.size() + response.model_name.size();
  for (const InferOutput& output : response.outputs) {
    bytes += 96 + output.name.size() + static_cast<size_t>(output.tensor.num_elements()) * 12;
  }
  return bytes;
}

}  // namespace

OutputEncoding OutputEncoding::FromRequest(const InferRequest& request,
                                           std::span<const SharedMemoryOutput> shared_memory) {
  OutputEncoding encoding;
  for (const SharedMemoryOutput& output : shared_memory) {
    encoding.shared_memory_.push_back(output.name);
  }
  encoding.all_binary_ = request.all_outputs_binary;
  encoding.named_.reserve(request.outputs.size());
  for (const RequestedOutput& output : request.outputs) {
    encoding.named_.emplace_back(output.name, output.binary);
  }
  return encoding;
}

bool OutputEncoding::InSharedMemory(std::string_view output_name) const {
  for (const std::string& name : shared_memory_) {
    if (name == output_name) return true;
  }
  return false;
}

bool OutputEncoding::IsBinary(std::string_view output_name) const {
  for (const auto& [name, binary] : named_) {
    if (name == output_name) return binary;
  }
  return all_binary_;
}

absl::StatusOr<EncodedInferResponse> EncodeInferResponse(const InferResponse& response,
                                                         const OutputEncoding& encoding) {
  EncodedInferResponse encoded;
  encoded.json.reserve(EstimateJsonBytes(response));
  JsonWriter writer(&encoded.json);
  writer.set_non_finite_as_strings(encoding.non_finite_as_strings());
  writer.BeginObject();
  writer.Field("model_name");
  writer.String(response.model_name);
  writer.Field("model_version");
  writer.String(response.model_version);
  if (!response.id.empty()) {
    writer.Field("id");
    writer.String(response.id);
  }
  if (!response.parameters.empty()) {
    writer.Field("parameters");
    WriteParameters(response.parameters, &writer);
  }
  writer.Field("outputs");
  writer.BeginArray();
  for (const InferOutput& output : response.outputs) {
    const Tensor& tensor = output.tensor;
    const bool shared = encoding.InSharedMemory(output.name);
    const bool binary = !shared && encoding.IsBinary(output.name);
    writer.BeginObject();
    writer.Field("name");
    writer.String(output.name);
    writer.Field("datatype");
    writer.String(DataTypeName(tensor.dtype()));
    writer.Field("shape");
    writer.BeginArray();
    for (const int64_t dim : tensor.shape()) writer.Int(dim);
    writer.EndArray();
    if (binary) {
      writer.Field("parameters");
      WriteParametersWith(output.parameters, "binary_data_size",
                          ParameterValue(uint64_t{tensor.byte_size()}), &writer);
    } else if (!output.parameters.empty()) {
      writer.Field("parameters");
      WriteParameters(output.parameters, &writer);
    }
    if (shared) {
      // The bytes are in the client's region already.
    } else if (binary) {
      encoded.binary = true;
      encoded.binary_parts.push_back(tensor.bytes());
    } else {
      writer.Field("data");
      BRIGADE_RETURN_IF_ERROR(WriteJsonTensorData(
          tensor, [&] { return StrCat("output '", output.name, "'"); }, &writer));
    }
    writer.EndObject();
  }
  writer.EndArray();
  writer.EndObject();
  return encoded;
}

// The client's half: a response body read back into an InferResponse.
namespace {

constexpr std::string_view kInferWhat = "infer";
// Nested `data` arrays deeper than this are refused (a tensor rank bound, not a protocol one).
constexpr int kMaxDataDepth = 32;

// Calls `on_scalar(element)` for each non-array element of a (possibly nested) array, in order.
template <typename OnScalar>
absl::Status VisitFlat(simdjson::dom::element element, int depth, OnScalar& on_scalar) {
  if (element.type() != simdjson::dom::element_type::ARRAY) return on_scalar(element);
  if (depth >= kMaxDataDepth) return MalformedResponse(kInferWhat, "'data' is nested too deeply");
  const simdjson::dom::array items = element.get_array().value_unsafe();
  for (simdjson::dom::element item : items) {
    BRIGADE_RETURN_IF_ERROR(VisitFlat(item, depth + 1, on_scalar));
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status ReadNumber(simdjson::dom::element element, T* out) {
  if constexpr (std::is_floating_point_v<T>) {
    double value = 0;
    if (element.get(value) != simdjson::SUCCESS) return absl::InternalError("not a number");
    *out = static_cast<T>(value);
  } else if constexpr (std::is_signed_v<T>) {
    int64_t value = 0;
    if (element.get(value) != simdjson::SUCCESS || value < std::numeric_limits<T>::min() ||
        value > std::numeric_limits<T>::max()) {
      return absl::InternalError("not an integer of the output's type");
    }
    *out = static_cast<T>(value);
  } else {
    uint64_t value = 0;
    if (element.get(value) != simdjson::SUCCESS || value > std::numeric_limits<T>::max()) {
      return absl::InternalError("not an unsigned integer of the output's type");
    }
    *out = static_cast<T>(value);
  }
  return absl::OkStatus();
}

template <typename T>
absl::StatusOr<Tensor> FixedTensorFromJson(DataType dtype, const Shape& shape,
                                           simdjson::dom::element data, std::string_view name) {
  BRIGADE_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Allocate(dtype, shape));
  T* values = reinterpret_cast<T*>(tensor.mutable_data());
  const int64_t count = tensor.num_elements();
  int64_t written = 0;
  auto on_scalar = [&](simdjson::dom::element element) -> absl::Status {
    if (written >= count) return absl::OkStatus();  // counted below, reported once
    if constexpr (std::is_same_v<T, bool>) {
      bool value = false;
      if (element.get(value) != simdjson::SUCCESS) {
        return MalformedResponse(kInferWhat, StrCat("output '", name, "': data holds a non-bool"));
      }
      values[written] = value;
    } else {
      absl::Status status = ReadNumber<T>(element, &values[written]);
      if (!status.ok()) {
        return MalformedResponse(kInferWhat, StrCat("output '", name, "': data element ", written,
                                                    " is ", status.message()));
      }
    }
    ++written;
    return absl::OkStatus();
  };
  int64_t seen = 0;
  auto counting = [&](simdjson::dom::element element) -> absl::Status {
    ++seen;
    return on_scalar(element);
  };
  BRIGADE_RETURN_IF_ERROR(VisitFlat(data, 0, counting));
  if (seen != count) {
    return MalformedResponse(
        kInferWhat, StrCat("output '", name, "' has ", seen, " data elements but its shape ",
                           ShapeToString(shape), " holds ", count));
  }
  return tensor;
}

absl::StatusOr<Tensor> BytesTensorFromJson(const Shape& shape, simdjson::dom::element data,
                                           std::string_view name) {
  BRIGADE_ASSIGN_OR_RETURN(int64_t count, ElementCount(shape));
  std::string serialized;
  int64_t seen = 0;
  auto on_scalar = [&](simdjson::dom::element element) -> absl::Status {
    std::string_view value;
    if (element.get(value) != simdjson::SUCCESS) {
      return MalformedResponse(kInferWhat, StrCat("output '", name, "': data holds a non-string"));
    }
    AppendSerializedString(value, &serialized);
    ++seen;
    return absl::OkStatus();
  };
  BRIGADE_RETURN_IF_ERROR(VisitFlat(data, 0, on_scalar));
  if (seen != count) {
    return MalformedResponse(kInferWhat,
                             StrCat("output '", name, "' has ", seen, " strings but its shape ",
                                    ShapeToString(shape), " holds ", count));
  }
  return Tensor::Copy(DataType::kBytes, shape, std::as_bytes(std::span(serialized)));
}

absl::StatusOr<Tensor> TensorFromJson(DataType dtype, const Shape& shape,
                                      simdjson::dom::element data, std::string_view name) {
  switch (dtype) {
    case DataType::kBool:
      return FixedTensorFromJson<bool>(dtype, shape, data, name);
    case DataType::kUint8:
      return FixedTensorFromJson<uint8_t>(dtype, shape, data, name);
    case DataType::kUint16:
      return FixedTensorFromJson<uint16_t>(dtype, shape, data, name);
    case DataType::kUint32:
      return FixedTensorFromJson<uint32_t>(dtype, shape, data, name);
    case DataType::kUint64:
      return FixedTensorFromJson<uint64_t>(dtype, shape, data, name);
    case DataType::kInt8:
      return FixedTensorFromJson<int8_t>(dtype, shape, data, name);
    case DataType::kInt16:
      return FixedTensorFromJson<int16_t>(dtype, shape, data, name);
    case DataType::kInt32:
      return FixedTensorFromJson<int32_t>(dtype, shape, data, name);
    case DataType::kInt64:
      return FixedTensorFromJson<int64_t>(dtype, shape, data, name);
    case DataType::kFp32:
      return FixedTensorFromJson<float>(dtype, shape, data, name);
    case DataType::kFp64:
      return FixedTensorFromJson<double>(dtype, shape, data, name);
    case DataType::kBytes:
      return BytesTensorFromJson(shape, data, name);
    case DataType::kFp16:
    case DataType::kBf16:
    case DataType::kInvalid:
      break;
  }
  return MalformedResponse(kInferWhat, StrCat("output '", name, "' of type ", DataTypeName(dtype),
                                              " was sent as JSON data"));
}

absl::Status DecodeOutput(simdjson::dom::object output, std::span<std::byte> binary,
                          size_t* binary_offset, const std::shared_ptr<const void>& owner,
                          InferOutput* out) {
  BRIGADE_ASSIGN_OR_RETURN(std::string_view name, RequiredString(output, "name", kInferWhat));
  out->name = std::string(name);
  BRIGADE_ASSIGN_OR_RETURN(std::string_view datatype,
                           RequiredString(output, "datatype", kInferWhat));
  const std::optional<DataType> dtype = ParseDataType(datatype);
  if (!dtype.has_value()) {
    return MalformedResponse(kInferWhat,
                             StrCat("output '", name, "' has unknown datatype '", datatype, "'"));
  }
  simdjson::dom::element shape_value;
  if (output["shape"].get(shape_value) != simdjson::SUCCESS) {
    return MalformedResponse(kInferWhat, StrCat("output '", name, "' has no shape"));
  }
  BRIGADE_ASSIGN_OR_RETURN(Shape shape, ReadShape(shape_value, kInferWhat));
  simdjson::dom::element parameters;
  if (output["parameters"].get(parameters) == simdjson::SUCCESS) {
    BRIGADE_RETURN_IF_ERROR(ReadParameters(parameters, kInferWhat, &out->parameters));
  }
  if (std::optional<int64_t> binary_size = out->parameters.GetInt("binary_data_size")) {
    const size_t size = static_cast<size_t>(*binary_size);
    if (*binary_size < 0 || binary.size() - *binary_offset < size) {
      return MalformedResponse(kInferWhat, StrCat("output '", name, "': binary_data_size ",
                                                  *binary_size, " runs past the end of the body"));
    }
    std::byte* bytes = binary.data() + *binary_offset;
    *binary_offset += size;
    // The binary section starts wherever the JSON header ends and its tensors are packed back to
    // back, so an output may start at any address: borrow the body where typed access is defined
    // (element-aligned), copy into aligned storage otherwise.
    const size_t element_size = DataTypeSize(*dtype);
    const bool misaligned =
        element_size > 1 && reinterpret_cast<uintptr_t>(bytes) % element_size != 0;
    absl::StatusOr<Tensor> tensor =
        misaligned ? Tensor::Copy(*dtype, std::move(shape), {bytes, size})
                   : Tensor::View(*dtype, std::move(shape), bytes, size, owner);
    if (!tensor.ok()) {
      return MalformedResponse(kInferWhat,
                               StrCat("output '", name, "': ", tensor.status().message()));
    }
    out->tensor = *std::move(tensor);
    return absl::OkStatus();
  }
  simdjson::dom::element data;
  if (output["data"].get(data) != simdjson::SUCCESS) {
    return MalformedResponse(kInferWhat, StrCat("output '", name,
                                                "' has neither data nor "
                                                "binary_data_size"));
  }
  absl::StatusOr<Tensor> tensor = TensorFromJson(*dtype, shape, data, name);
  if (!tensor.ok() && tensor.status().code() != absl::StatusCode::kInternal) {
    return MalformedResponse(kInferWhat,
                             StrCat("output '", name, "': ", tensor.status().message()));
  }
  BRIGADE_ASSIGN_OR_RETURN(out->tensor, std::move(tensor));
  return absl::OkStatus();
}

}  // namespace

absl::Status DecodeInferResponse(simdjson::dom::parser& parser, std::string_view json,
                                 std::span<std::byte> binary, std::shared_ptr<const void> owner,
                                 InferResponse* response) {
  response->outputs.clear();
  response->parameters = Parameters();
  BRIGADE_ASSIGN_OR_RETURN(simdjson::dom::element root, ParseJson(parser, json, kInferWhat));
  simdjson::dom::object object;
  if (root.get(object) != simdjson::SUCCESS) {
    return MalformedResponse(kInferWhat, "the body is not a JSON object");
  }
  BRIGADE_ASSIGN_OR_RETURN(std::string_view model_name,
                           OptionalString(object, "model_name", kInferWhat));
  response->model_name.assign(model_name);
  BRIGADE_ASSIGN_OR_RETURN(std::string_view model_version,
                           OptionalString(object, "model_version", kInferWhat));
  response->model_version.assign(model_version);
  BRIGADE_ASSIGN_OR_RETURN(std::string_view id, OptionalString(object, "id", kInferWhat));
  response->id.assign(id);
  simdjson::dom::element parameters;
  if (object["parameters"].get(parameters) == simdjson::SUCCESS) {
    BRIGADE_RETURN_IF_ERROR(ReadParameters(parameters, kInferWhat, &response->parameters));
  }
  simdjson::dom::array outputs;
  if (object["outputs"].get(outputs) != simdjson::SUCCESS) {
    return MalformedResponse(kInferWhat, "'outputs' is missing or not an array");
  }
  size_t binary_offset = 0;
  response->outputs.reserve(outputs.size());
  for (simdjson::dom::element item : outputs) {
    simdjson::dom::object output;
    if (item.get(output) != simdjson::SUCCESS) {
      return MalformedResponse(kInferWhat, "an entry of 'outputs' is not an object");
    }
    InferOutput& decoded = response->outputs.emplace_back();
    BRIGADE_RETURN_IF_ERROR(DecodeOutput(output, binary, &binary_offset, owner, &decoded));
  }
  return absl::OkStatus();
}

}  // namespace brigade::protocol::http
