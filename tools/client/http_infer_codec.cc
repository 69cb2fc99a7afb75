#include "tools/client/http_infer_codec.h"

#include <cstring>
#include <limits>
#include <type_traits>
#include <variant>

#include "tools/client/json_decode.h"
#include "tools/client/json_text.h"
#include "core/status_macros.h"
#include "core/strings.h"

namespace brigade::client {
namespace {

constexpr std::string_view kWhat = "infer";
// Nested `data` arrays deeper than this are refused (a tensor rank bound, not a protocol one).
constexpr int kMaxDataDepth = 32;

bool IsUnreserved(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == '.' || c == '~';
}

void AppendParameterValue(const ParameterValue& value, std::string* out) {
  std::visit(
      [out](const auto& v) {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, bool>) {
          out->append(v ? "true" : "false");
        } else if constexpr (std::is_same_v<V, int64_t>) {
          AppendJsonInt(v, out);
        } else if constexpr (std::is_same_v<V, uint64_t>) {
          AppendJsonUint(v, out);
        } else if constexpr (std::is_same_v<V, double>) {
          AppendJsonDouble(v, out);
        } else {
          AppendJsonString(v, out);
        }
      },
      value);
}

// Writes `"parameters":{...}` from `parameters` plus one extra entry (skipped when `extra_key` is
// empty), or nothing when both are empty. `comma` is written first when something is written.
void AppendParameters(const Parameters& parameters, std::string_view extra_key,
                      const ParameterValue& extra_value, bool comma, std::string* out) {
  if (parameters.empty() && extra_key.empty()) return;
  if (comma) out->push_back(',');
  out->append("\"parameters\":{");
  bool first = true;
  for (const Parameters::Entry& entry : parameters.entries()) {
    if (entry.first == extra_key) continue;  // the codec's own value wins
    if (!first) out->push_back(',');
    first = false;
    AppendJsonString(entry.first, out);
    out->push_back(':');
    AppendParameterValue(entry.second, out);
  }
  if (!extra_key.empty()) {
    if (!first) out->push_back(',');
    AppendJsonString(extra_key, out);
    out->push_back(':');
    AppendParameterValue(extra_value, out);
  }
  out->push_back('}');
}

template <typename T, typename Append>
void AppendValues(const Tensor& tensor, Append append, std::string* out) {
  bool first = true;
  for (T value : tensor.values<T>()) {
    if (!first) out->push_back(',');
    first = false;
    append(value, out);
  }
}

absl::Status AppendTensorData(const InferInput& input, std::string* out) {
  const Tensor& tensor = input.tensor;
  out->append("\"data\":[");
  auto append_int = [](int64_t v, std::string* o) { AppendJsonInt(v, o); };
  auto append_uint = [](uint64_t v, std::string* o) { AppendJsonUint(v, o); };
  switch (tensor.dtype()) {
    case DataType::kBool: {
      bool first = true;
      for (std::byte b : tensor.bytes()) {
        if (!first) out->push_back(',');
        first = false;
        out->append(b != std::byte{0} ? "true" : "false");
      }
      break;
    }
    case DataType::kUint8:
      AppendValues<uint8_t>(tensor, append_uint, out);
      break;
    case DataType::kUint16:
      AppendValues<uint16_t>(tensor, append_uint, out);
      break;
    case DataType::kUint32:
      AppendValues<uint32_t>(tensor, append_uint, out);
      break;
    case DataType::kUint64:
      AppendValues<uint64_t>(tensor, append_uint, out);
      break;
    case DataType::kInt8:
      AppendValues<int8_t>(tensor, append_int, out);
      break;
    case DataType::kInt16:
      AppendValues<int16_t>(tensor, append_int, out);
      break;
    case DataType::kInt32:
      AppendValues<int32_t>(tensor, append_int, out);
      break;
    case DataType::kInt64:
      AppendValues<int64_t>(tensor, append_int, out);
      break;
    case DataType::kFp32:
      AppendValues<float>(
          tensor, [](float v, std::string* o) { AppendJsonFloat(v, o); }, out);
      break;
    case DataType::kFp64:
      AppendValues<double>(
          tensor, [](double v, std::string* o) { AppendJsonDouble(v, o); }, out);
      break;
    case DataType::kBytes: {
      BRIGADE_ASSIGN_OR_RETURN(std::vector<std::string_view> values, tensor.StringValues());
      bool first = true;
      for (std::string_view value : values) {
        if (!IsValidUtf8(value)) {
          return absl::InvalidArgumentError(
              StrCat("input '", input.name,
                     "': a BYTES element is not UTF-8 and cannot be sent as JSON; use binary "
                     "inputs"));
        }
        if (!first) out->push_back(',');
        first = false;
        AppendJsonString(value, out);
      }
      break;
    }
    case DataType::kFp16:
    case DataType::kBf16:
    case DataType::kInvalid:
      return absl::InvalidArgumentError(StrCat("input '", input.name,
                                               "': ", DataTypeName(tensor.dtype()),
                                               " has no JSON representation; use binary inputs"));
  }
  out->push_back(']');
  return absl::OkStatus();
}

// Calls `on_scalar(element)` for each non-array element of a (possibly nested) array, in order.
template <typename OnScalar>
absl::Status VisitFlat(simdjson::dom::element element, int depth, OnScalar& on_scalar) {
  if (element.type() != simdjson::dom::element_type::ARRAY) return on_scalar(element);
  if (depth >= kMaxDataDepth) return MalformedResponse(kWhat, "'data' is nested too deeply");
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
        return MalformedResponse(kWhat, StrCat("output '", name, "': data holds a non-bool"));
      }
      values[written] = value;
    } else {
      absl::Status status = ReadNumber<T>(element, &values[written]);
      if (!status.ok()) {
        return MalformedResponse(
            kWhat, StrCat("output '", name, "': data element ", written, " is ", status.message()));
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
        kWhat, StrCat("output '", name, "' has ", seen, " data elements but its shape ",
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
      return MalformedResponse(kWhat, StrCat("output '", name, "': data holds a non-string"));
    }
    AppendSerializedString(value, &serialized);
    ++seen;
    return absl::OkStatus();
  };
  BRIGADE_RETURN_IF_ERROR(VisitFlat(data, 0, on_scalar));
  if (seen != count) {
    return MalformedResponse(kWhat,
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
  return MalformedResponse(
      kWhat, StrCat("output '", name, "' of type ", DataTypeName(dtype), " was sent as JSON data"));
}

absl::Status DecodeOutput(simdjson::dom::object output, std::span<std::byte> binary,
                          size_t* binary_offset, const std::shared_ptr<const void>& owner,
                          InferOutput* out) {
  BRIGADE_ASSIGN_OR_RETURN(std::string_view name, RequiredString(output, "name", kWhat));
  out->name = std::string(name);
  BRIGADE_ASSIGN_OR_RETURN(std::string_view datatype, RequiredString(output, "datatype", kWhat));
  const std::optional<DataType> dtype = ParseDataType(datatype);
  if (!dtype.has_value()) {
    return MalformedResponse(kWhat,
                             StrCat("output '", name, "' has unknown datatype '", datatype, "'"));
  }
  simdjson::dom::element shape_value;
  if (output["shape"].get(shape_value) != simdjson::SUCCESS) {
    return MalformedResponse(kWhat, StrCat("output '", name, "' has no shape"));
  }
  BRIGADE_ASSIGN_OR_RETURN(Shape shape, ReadShape(shape_value, kWhat));
  simdjson::dom::element parameters;
  if (output["parameters"].get(parameters) == simdjson::SUCCESS) {
    BRIGADE_RETURN_IF_ERROR(ReadParameters(parameters, kWhat, &out->parameters));
  }
  if (std::optional<int64_t> binary_size = out->parameters.GetInt("binary_data_size")) {
    const size_t size = static_cast<size_t>(*binary_size);
    if (*binary_size < 0 || binary.size() - *binary_offset < size) {
      return MalformedResponse(kWhat, StrCat("output '", name, "': binary_data_size ", *binary_size,
                                             " runs past the end of the body"));
    }
    std::byte* bytes = binary.data() + *binary_offset;
    *binary_offset += size;
    absl::StatusOr<Tensor> tensor = Tensor::View(*dtype, std::move(shape), bytes, size, owner);
    if (!tensor.ok()) {
      return MalformedResponse(kWhat, StrCat("output '", name, "': ", tensor.status().message()));
    }
    out->tensor = *std::move(tensor);
    return absl::OkStatus();
  }
  simdjson::dom::element data;
  if (output["data"].get(data) != simdjson::SUCCESS) {
    return MalformedResponse(kWhat, StrCat("output '", name,
                                           "' has neither data nor "
                                           "binary_data_size"));
  }
  absl::StatusOr<Tensor> tensor = TensorFromJson(*dtype, shape, data, name);
  if (!tensor.ok() && tensor.status().code() != absl::StatusCode::kInternal) {
    return MalformedResponse(kWhat, StrCat("output '", name, "': ", tensor.status().message()));
  }
  BRIGADE_ASSIGN_OR_RETURN(out->tensor, std::move(tensor));
  return absl::OkStatus();
}

}  // namespace

void AppendPercentEncoded(std::string_view segment, std::string* out) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (char c : segment) {
    if (IsUnreserved(c)) {
      out->push_back(c);
    } else {
      const auto byte = static_cast<unsigned char>(c);
      out->push_back('%');
      out->push_back(kHex[byte >> 4]);
      out->push_back(kHex[byte & 0xf]);
    }
  }
}

void AppendModelPath(std::string_view model, std::string_view version, std::string_view suffix,
                     std::string* out) {
  out->append("/v2/models/");
  AppendPercentEncoded(model, out);
  if (!version.empty()) {
    out->append("/versions/");
    AppendPercentEncoded(version, out);
  }
  out->append(suffix);
}

absl::Status EncodeInferRequest(const InferSpec& request, std::string* json,
                                std::vector<std::span<const std::byte>>* binary_parts) {
  json->clear();
  binary_parts->clear();
  json->push_back('{');
  bool comma = false;
  if (!request.id.empty()) {
    json->append("\"id\":");
    AppendJsonString(request.id, json);
    comma = true;
  }
  AppendParameters(request.parameters, request.binary_outputs ? "binary_data_output" : "",
                   ParameterValue(true), comma, json);
  if (comma || !request.parameters.empty() || request.binary_outputs) json->push_back(',');

  json->append("\"inputs\":[");
  for (size_t i = 0; i < request.inputs.size(); ++i) {
    const InferInput& input = request.inputs[i];
    const Tensor& tensor = input.tensor;
    if (tensor.empty()) {
      return absl::InvalidArgumentError(StrCat("input '", input.name, "' has no tensor"));
    }
    if (i > 0) json->push_back(',');
    json->append("{\"name\":");
    AppendJsonString(input.name, json);
    json->append(",\"shape\":[");
    for (size_t d = 0; d < tensor.shape().size(); ++d) {
      if (d > 0) json->push_back(',');
      AppendJsonInt(tensor.shape()[d], json);
    }
    json->append("],\"datatype\":\"");
    json->append(DataTypeName(tensor.dtype()));
    json->push_back('"');
    if (request.binary_inputs) {
      AppendParameters(input.parameters, "binary_data_size",
                       ParameterValue(static_cast<int64_t>(tensor.byte_size())), true, json);
      binary_parts->push_back(tensor.bytes());
    } else {
      AppendParameters(input.parameters, "", ParameterValue(false), true, json);
      json->push_back(',');
      BRIGADE_RETURN_IF_ERROR(AppendTensorData(input, json));
    }
    json->push_back('}');
  }
  json->push_back(']');

  if (!request.outputs.empty()) {
    json->append(",\"outputs\":[");
    for (size_t i = 0; i < request.outputs.size(); ++i) {
      const RequestedOutput& output = request.outputs[i];
      if (i > 0) json->push_back(',');
      json->append("{\"name\":");
      AppendJsonString(output.name, json);
      AppendParameters(output.parameters, output.binary ? "binary_data" : "", ParameterValue(true),
                       true, json);
      json->push_back('}');
    }
    json->push_back(']');
  }
  json->push_back('}');
  return absl::OkStatus();
}

absl::Status DecodeInferResponse(simdjson::dom::parser& parser, std::string_view json,
                                 std::span<std::byte> binary, std::shared_ptr<const void> owner,
                                 InferResponse* response) {
  response->outputs.clear();
  response->parameters = Parameters();
  BRIGADE_ASSIGN_OR_RETURN(simdjson::dom::element root, ParseJson(parser, json, kWhat));
  simdjson::dom::object object;
  if (root.get(object) != simdjson::SUCCESS) {
    return MalformedResponse(kWhat, "the body is not a JSON object");
  }
  BRIGADE_ASSIGN_OR_RETURN(std::string_view model_name,
                           OptionalString(object, "model_name", kWhat));
  response->model_name.assign(model_name);
  BRIGADE_ASSIGN_OR_RETURN(std::string_view model_version,
                           OptionalString(object, "model_version", kWhat));
  response->model_version.assign(model_version);
  BRIGADE_ASSIGN_OR_RETURN(std::string_view id, OptionalString(object, "id", kWhat));
  response->id.assign(id);
  simdjson::dom::element parameters;
  if (object["parameters"].get(parameters) == simdjson::SUCCESS) {
    BRIGADE_RETURN_IF_ERROR(ReadParameters(parameters, kWhat, &response->parameters));
  }
  simdjson::dom::array outputs;
  if (object["outputs"].get(outputs) != simdjson::SUCCESS) {
    return MalformedResponse(kWhat, "'outputs' is missing or not an array");
  }
  size_t binary_offset = 0;
  response->outputs.reserve(outputs.size());
  for (simdjson::dom::element item : outputs) {
    simdjson::dom::object output;
    if (item.get(output) != simdjson::SUCCESS) {
      return MalformedResponse(kWhat, "an entry of 'outputs' is not an object");
    }
    InferOutput& decoded = response->outputs.emplace_back();
    BRIGADE_RETURN_IF_ERROR(DecodeOutput(output, binary, &binary_offset, owner, &decoded));
  }
  return absl::OkStatus();
}

}  // namespace brigade::client
