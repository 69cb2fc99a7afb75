#include "protocol/grpc/infer_messages.h"

#include <array>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "absl/container/flat_hash_set.h"
#include "core/status_macros.h"
#include "core/strings.h"
#include "protocol/infer_parameters.h"
#include "protocol/model_version.h"
#include "protocol/shared_memory.h"

namespace brigade::protocol::grpc {
namespace {

using inference::InferParameter;
using inference::InferTensorContents;
using inference::ModelInferRequest;

absl::Status InputError(std::string_view input, std::string_view what) {
  return absl::InvalidArgumentError(StrCat("input '", input, "': ", what));
}

// The typed contents field that carries `type`; empty for FP16/BF16, which have none.
std::string_view ContentsFieldFor(DataType type) {
  switch (type) {
    case DataType::kBool:
      return "bool_contents";
    case DataType::kInt8:
    case DataType::kInt16:
    case DataType::kInt32:
      return "int_contents";
    case DataType::kInt64:
      return "int64_contents";
    case DataType::kUint8:
    case DataType::kUint16:
    case DataType::kUint32:
      return "uint_contents";
    case DataType::kUint64:
      return "uint64_contents";
    case DataType::kFp32:
      return "fp32_contents";
    case DataType::kFp64:
      return "fp64_contents";
    case DataType::kBytes:
      return "bytes_contents";
    case DataType::kFp16:
    case DataType::kBf16:
    case DataType::kInvalid:
      return {};
  }
  return {};
}

struct ContentsField {
  std::string_view name;
  int size;
};

std::array<ContentsField, 8> ContentsFields(const InferTensorContents& c) {
  return {{{"bool_contents", c.bool_contents_size()},
           {"int_contents", c.int_contents_size()},
           {"int64_contents", c.int64_contents_size()},
           {"uint_contents", c.uint_contents_size()},
           {"uint64_contents", c.uint64_contents_size()},
           {"fp32_contents", c.fp32_contents_size()},
           {"fp64_contents", c.fp64_contents_size()},
           {"bytes_contents", c.bytes_contents_size()}}};
}

// Copies values whose wire type is wider than the tensor's element type, checking each one.
template <typename Element, typename Wire>
absl::StatusOr<Tensor> NarrowingCopy(std::string_view input, DataType type, Shape shape,
                                     const google::protobuf::RepeatedField<Wire>& values,
                                     std::string_view field) {
  BRIGADE_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Allocate(type, std::move(shape)));
  std::span<Element> out = tensor.mutable_values<Element>();
  for (int i = 0; i < values.size(); ++i) {
    const Wire value = values.Get(i);
    if (!std::in_range<Element>(value)) {
      return InputError(
          input, StrCat(field, "[", i, "] = ", value, " is out of range for ", DataTypeName(type)));
    }
    out[static_cast<size_t>(i)] = static_cast<Element>(value);
  }
  return tensor;
}

// Copies values whose wire type is the tensor's element type.
template <typename Wire>
absl::StatusOr<Tensor> ExactCopy(DataType type, Shape shape,
                                 const google::protobuf::RepeatedField<Wire>& values) {
  static_assert(sizeof(bool) == 1, "BOOL elements are one byte on the wire and in tensors");
  return Tensor::Copy(type, std::move(shape),
                      std::as_bytes(std::span<const Wire>(values.data(), values.size())));
}

absl::StatusOr<Tensor> BytesTensor(std::string_view input, Shape shape,
                                   const google::protobuf::RepeatedPtrField<std::string>& values) {
  size_t byte_size = 0;
  for (int i = 0; i < values.size(); ++i) {
    if (values.Get(i).size() > std::numeric_limits<uint32_t>::max()) {
      return InputError(input, StrCat("bytes_contents[", i, "] is longer than 2^32-1 bytes"));
    }
    byte_size += sizeof(uint32_t) + values.Get(i).size();
  }
  BRIGADE_ASSIGN_OR_RETURN(Tensor tensor, Tensor::AllocateBytes(std::move(shape), byte_size));
  std::byte* out = tensor.mutable_data();
  for (const std::string& value : values) {
    const auto length = static_cast<uint32_t>(value.size());
    std::memcpy(out, &length, sizeof(length));  // little-endian on every supported host
    out += sizeof(length);
    if (!value.empty()) std::memcpy(out, value.data(), value.size());
    out += value.size();
  }
  return tensor;
}

absl::StatusOr<Tensor> DecodeTypedContents(const ModelInferRequest::InferInputTensor& input,
                                           DataType type, Shape shape, int64_t element_count) {
  const std::string& name = input.name();
  const std::string_view expected = ContentsFieldFor(type);
  if (expected.empty()) {
    return InputError(name, StrCat(DataTypeName(type),
                                   " has no typed contents field; send it in raw_input_contents"));
  }
  const InferTensorContents& contents = input.contents();
  int expected_size = 0;
  for (const ContentsField& field : ContentsFields(contents)) {
    if (field.name == expected) {
      expected_size = field.size;
    } else if (field.size > 0) {
      return InputError(name, StrCat("datatype ", DataTypeName(type), " takes ", expected, ", but ",
                                     field.name, " is set"));
    }
  }
  if (expected_size != element_count) {
    return InputError(name, StrCat(expected, " holds ", expected_size, " values but shape ",
                                   ShapeToString(shape), " has ", element_count, " elements"));
  }
  switch (type) {
    case DataType::kBool:
      return ExactCopy(type, std::move(shape), contents.bool_contents());
    case DataType::kInt8:
      return NarrowingCopy<int8_t>(name, type, std::move(shape), contents.int_contents(), expected);
    case DataType::kInt16:
      return NarrowingCopy<int16_t>(name, type, std::move(shape), contents.int_contents(),
                                    expected);
    case DataType::kInt32:
      return ExactCopy(type, std::move(shape), contents.int_contents());
    case DataType::kInt64:
      return ExactCopy(type, std::move(shape), contents.int64_contents());
    case DataType::kUint8:
      return NarrowingCopy<uint8_t>(name, type, std::move(shape), contents.uint_contents(),
                                    expected);
    case DataType::kUint16:
      return NarrowingCopy<uint16_t>(name, type, std::move(shape), contents.uint_contents(),
                                     expected);
    case DataType::kUint32:
      return ExactCopy(type, std::move(shape), contents.uint_contents());
    case DataType::kUint64:
      return ExactCopy(type, std::move(shape), contents.uint64_contents());
    case DataType::kFp32:
      return ExactCopy(type, std::move(shape), contents.fp32_contents());
    case DataType::kFp64:
      return ExactCopy(type, std::move(shape), contents.fp64_contents());
    case DataType::kBytes:
      return BytesTensor(name, std::move(shape), contents.bytes_contents());
    case DataType::kFp16:
    case DataType::kBf16:
    case DataType::kInvalid:
      break;
  }
  return absl::InternalError(StrCat("input '", name, "': unhandled datatype"));
}

// An unsigned value from an int64 or uint64 parameter, at most `max`.
absl::StatusOr<uint64_t> UnsignedParameter(const InferParameter& value, std::string_view key,
                                           uint64_t max) {
  uint64_t out = 0;
  if (value.parameter_choice_case() == InferParameter::kInt64Param && value.int64_param() >= 0) {
    out = static_cast<uint64_t>(value.int64_param());
  } else if (value.parameter_choice_case() == InferParameter::kUint64Param) {
    out = value.uint64_param();
  } else {
    return absl::InvalidArgumentError(
        StrCat("parameter '", key, "' must be a non-negative integer"));
  }
  if (out > max) {
    return absl::InvalidArgumentError(StrCat("parameter '", key, "' = ", out, " exceeds ", max));
  }
  return out;
}

absl::Status DecodeRequestParameters(const ModelInferRequest& message, InferRequest* request) {
  for (const auto& [key, value] : message.parameters()) {
    if (key == kPriorityParameter) {
      BRIGADE_ASSIGN_OR_RETURN(uint64_t priority,
                               UnsignedParameter(value, key, std::numeric_limits<uint32_t>::max()));
      request->priority = static_cast<uint32_t>(priority);
    } else if (key == kTimeoutParameter) {
      BRIGADE_ASSIGN_OR_RETURN(uint64_t timeout_us,
                               UnsignedParameter(value, key, std::numeric_limits<int64_t>::max()));
      request->deadline = Deadline::Earliest(
          request->deadline,
          Deadline::AfterUs(request->clock.at(Stage::kArrival), static_cast<int64_t>(timeout_us)));
    }
  }
  BRIGADE_RETURN_IF_ERROR(DecodeParameters(message.parameters(), "request", &request->parameters));
  BRIGADE_RETURN_IF_ERROR(
      CheckParameters(ParameterScope::kRequest, request->parameters, "request"));
  request->parameters.Erase(kPriorityParameter);
  request->parameters.Erase(kTimeoutParameter);
  return absl::OkStatus();
}

// `raw_index`: the input's entry in raw_input_contents, which lists only the inputs not in shared
// memory (as Triton's clients send it).
absl::StatusOr<InferInput> DecodeInput(const std::shared_ptr<const ModelInferRequest>& message,
                                       int index, int raw_index,
                                       const SharedMemoryResolver* shared_memory) {
  const ModelInferRequest::InferInputTensor& input = message->inputs(index);
  const std::string& name = input.name();
  InferInput out;
  out.name = name;
  const std::optional<DataType> type = ParseDataType(input.datatype());
  if (!type.has_value()) {
    return InputError(name, StrCat("unknown datatype '", input.datatype(), "'"));
  }
  Shape shape(input.shape().begin(), input.shape().end());
  absl::StatusOr<int64_t> element_count = ElementCount(shape);
  if (!element_count.ok()) {
    return InputError(
        name, StrCat("shape ", ShapeToString(shape), ": ", element_count.status().message()));
  }
  BRIGADE_RETURN_IF_ERROR(
      DecodeParameters(input.parameters(), StrCat("input '", name, "'"), &out.parameters));
  BRIGADE_RETURN_IF_ERROR(
      CheckParameters(ParameterScope::kInput, out.parameters, StrCat("input '", name, "'")));
  BRIGADE_ASSIGN_OR_RETURN(std::optional<SharedMemoryRef> shared,
                           TakeSharedMemoryRef(&out.parameters, StrCat("input '", name, "'")));

  absl::StatusOr<Tensor> tensor;
  if (shared) {
    if (input.has_contents()) {
      return InputError(name, "contents must not be set for an input in shared memory");
    }
    tensor = SharedMemoryInputTensor(shared_memory, *shared, *type, std::move(shape),
                                     StrCat("input '", name, "'"));
    if (!tensor.ok()) return tensor.status();
  } else if (message->raw_input_contents_size() > 0) {
    if (input.has_contents()) {
      return InputError(name, "contents must not be set when the request uses raw_input_contents");
    }
    const std::string& raw = message->raw_input_contents(raw_index);
    // The tensor shares ownership of the whole message (aliasing constructor): see the header.
    tensor = Tensor::View(*type, std::move(shape), const_cast<char*>(raw.data()), raw.size(),
                          std::shared_ptr<const void>(message, raw.data()));
    if (!tensor.ok()) {
      return absl::Status(tensor.status().code(),
                          StrCat("input '", name, "' (raw_input_contents[", raw_index,
                                 "]): ", tensor.status().message()));
    }
  } else {
    tensor = DecodeTypedContents(input, *type, std::move(shape), *element_count);
    if (!tensor.ok()) return tensor.status();
  }
  out.tensor = *std::move(tensor);
  return out;
}

ParameterValue ToValue(const InferParameter& value) {
  switch (value.parameter_choice_case()) {
    case InferParameter::kBoolParam:
      return value.bool_param();
    case InferParameter::kInt64Param:
      return value.int64_param();
    case InferParameter::kStringParam:
      return value.string_param();
    case InferParameter::kDoubleParam:
      return value.double_param();
    case InferParameter::kUint64Param:
      return value.uint64_param();
    case InferParameter::PARAMETER_CHOICE_NOT_SET:
      break;
  }
  return false;  // unreachable: callers reject unset values first
}

}  // namespace

absl::Status DecodeParameters(const InferParameterMap& map, std::string_view where, Parameters* out,
                              UnsetParameter unset) {
  for (const auto& [key, value] : map) {
    if (value.parameter_choice_case() == InferParameter::PARAMETER_CHOICE_NOT_SET) {
      if (unset == UnsetParameter::kSkip) continue;
      return absl::InvalidArgumentError(
          StrCat("parameter '", key, "' of ", where, " has no value"));
    }
    out->Set(key, ToValue(value));
  }
  return absl::OkStatus();
}

void EncodeParameters(const Parameters& parameters, InferParameterMap* out) {
  for (const auto& [key, value] : parameters.entries()) {
    InferParameter& parameter = (*out)[key];
    std::visit(
        [&parameter](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, bool>) {
            parameter.set_bool_param(v);
          } else if constexpr (std::is_same_v<T, int64_t>) {
            parameter.set_int64_param(v);
          } else if constexpr (std::is_same_v<T, uint64_t>) {
            parameter.set_uint64_param(v);
          } else if constexpr (std::is_same_v<T, double>) {
            parameter.set_double_param(v);
          } else {
            parameter.set_string_param(v);
          }
        },
        value);
  }
}

absl::StatusOr<std::unique_ptr<InferRequest>> DecodeModelInferRequest(
    std::shared_ptr<const ModelInferRequest> message, int64_t arrival_ns,
    const SharedMemoryResolver* shared_memory) {
  if (message->model_name().empty()) return absl::InvalidArgumentError("model_name is empty");
  auto request = std::make_unique<InferRequest>();
  request->protocol = Protocol::kGrpc;
  request->clock.Mark(Stage::kArrival, arrival_ns);
  request->model_name = message->model_name();
  request->id = message->id();
  BRIGADE_ASSIGN_OR_RETURN(request->model_version,
                           ParseModelVersion(message->model_version(), "model_version"));
  BRIGADE_RETURN_IF_ERROR(DecodeRequestParameters(*message, request.get()));

  const int num_inputs = message->inputs_size();
  int shared_inputs = 0;
  for (const ModelInferRequest::InferInputTensor& input : message->inputs()) {
    if (input.parameters().contains(std::string(kSharedMemoryRegionParameter))) ++shared_inputs;
  }
  if (message->raw_input_contents_size() > 0 &&
      message->raw_input_contents_size() != num_inputs - shared_inputs) {
    return absl::InvalidArgumentError(
        StrCat("raw_input_contents has ", message->raw_input_contents_size(), " entries for ",
               num_inputs - shared_inputs, " inputs not in shared memory"));
  }
  int raw_index = 0;
  absl::flat_hash_set<std::string_view> seen;
  request->inputs.reserve(static_cast<size_t>(num_inputs));
  for (int i = 0; i < num_inputs; ++i) {
    const std::string& name = message->inputs(i).name();
    if (name.empty()) return absl::InvalidArgumentError(StrCat("inputs[", i, "] has no name"));
    if (!seen.insert(name).second) return InputError(name, "appears more than once");
    BRIGADE_ASSIGN_OR_RETURN(InferInput input, DecodeInput(message, i, raw_index, shared_memory));
    if (!message->inputs(i).parameters().contains(std::string(kSharedMemoryRegionParameter))) {
      ++raw_index;
    }
    request->inputs.push_back(std::move(input));
  }

  seen.clear();
  request->outputs.reserve(static_cast<size_t>(message->outputs_size()));
  for (const ModelInferRequest::InferRequestedOutputTensor& output : message->outputs()) {
    if (output.name().empty()) return absl::InvalidArgumentError("a requested output has no name");
    if (!seen.insert(output.name()).second) {
      return absl::InvalidArgumentError(
          StrCat("output '", output.name(), "' is requested more than once"));
    }
    RequestedOutput requested;
    requested.name = output.name();
    BRIGADE_RETURN_IF_ERROR(DecodeParameters(
        output.parameters(), StrCat("output '", output.name(), "'"), &requested.parameters));
    BRIGADE_RETURN_IF_ERROR(CheckParameters(ParameterScope::kOutput, requested.parameters,
                                            StrCat("output '", output.name(), "'")));
    request->outputs.push_back(std::move(requested));
  }
  return request;
}

absl::Status EncodeModelInferResponse(const InferResponse& response,
                                      inference::ModelInferResponse* out,
                                      std::span<const SharedMemoryOutput> shared_memory) {
  out->Clear();
  out->set_model_name(response.model_name);
  out->set_model_version(response.model_version);
  out->set_id(response.id);
  EncodeParameters(response.parameters, out->mutable_parameters());
  out->mutable_outputs()->Reserve(static_cast<int>(response.outputs.size()));
  out->mutable_raw_output_contents()->Reserve(static_cast<int>(response.outputs.size()));
  for (const InferOutput& output : response.outputs) {
    const Tensor& tensor = output.tensor;
    if (tensor.empty()) {
      return absl::InternalError(StrCat("output '", output.name, "' has no data type"));
    }
    inference::ModelInferResponse::InferOutputTensor* encoded = out->add_outputs();
    encoded->set_name(output.name);
    const std::string_view type = DataTypeName(tensor.dtype());
    encoded->set_datatype(type.data(), type.size());
    encoded->mutable_shape()->Add(tensor.shape().begin(), tensor.shape().end());
    EncodeParameters(output.parameters, encoded->mutable_parameters());
    std::string* raw = out->add_raw_output_contents();
    // An output in shared memory keeps its (empty) entry, so entries stay parallel to outputs.
    if (tensor.byte_size() > 0 && !InSharedMemory(shared_memory, output.name)) {
      raw->assign(reinterpret_cast<const char*>(tensor.data()), tensor.byte_size());
    }
  }
  return absl::OkStatus();
}

// The client's half: an InferSpec written as a request, and a response read back.
namespace {

absl::Status OutputError(std::string_view name, std::string_view detail) {
  return absl::InternalError(StrCat("malformed infer response: output '", name, "': ", detail));
}

// Copies typed contents into a new tensor of `dtype`, converting each element with a cast
// (int_contents carries INT8/INT16 widened to int32, uint_contents UINT8/UINT16).
template <typename T, typename Field>
absl::StatusOr<Tensor> CopyTyped(DataType dtype, Shape shape, const Field& values,
                                 std::string_view name) {
  BRIGADE_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Allocate(dtype, std::move(shape)));
  if (static_cast<int64_t>(values.size()) != tensor.num_elements()) {
    return OutputError(name, StrCat("contents hold ", values.size(), " elements, shape says ",
                                    tensor.num_elements()));
  }
  T* out = reinterpret_cast<T*>(tensor.mutable_data());
  for (int i = 0; i < values.size(); ++i) out[i] = static_cast<T>(values[i]);
  return tensor;
}

absl::StatusOr<Tensor> TensorFromContents(DataType dtype, Shape shape,
                                          const inference::InferTensorContents& contents,
                                          std::string_view name) {
  switch (dtype) {
    case DataType::kBool:
      return CopyTyped<bool>(dtype, std::move(shape), contents.bool_contents(), name);
    case DataType::kInt8:
      return CopyTyped<int8_t>(dtype, std::move(shape), contents.int_contents(), name);
    case DataType::kInt16:
      return CopyTyped<int16_t>(dtype, std::move(shape), contents.int_contents(), name);
    case DataType::kInt32:
      return CopyTyped<int32_t>(dtype, std::move(shape), contents.int_contents(), name);
    case DataType::kInt64:
      return CopyTyped<int64_t>(dtype, std::move(shape), contents.int64_contents(), name);
    case DataType::kUint8:
      return CopyTyped<uint8_t>(dtype, std::move(shape), contents.uint_contents(), name);
    case DataType::kUint16:
      return CopyTyped<uint16_t>(dtype, std::move(shape), contents.uint_contents(), name);
    case DataType::kUint32:
      return CopyTyped<uint32_t>(dtype, std::move(shape), contents.uint_contents(), name);
    case DataType::kUint64:
      return CopyTyped<uint64_t>(dtype, std::move(shape), contents.uint64_contents(), name);
    case DataType::kFp32:
      return CopyTyped<float>(dtype, std::move(shape), contents.fp32_contents(), name);
    case DataType::kFp64:
      return CopyTyped<double>(dtype, std::move(shape), contents.fp64_contents(), name);
    case DataType::kBytes: {
      std::string serialized;
      for (const std::string& value : contents.bytes_contents()) {
        AppendSerializedString(value, &serialized);
      }
      absl::StatusOr<Tensor> tensor =
          Tensor::Copy(DataType::kBytes, std::move(shape), std::as_bytes(std::span(serialized)));
      if (!tensor.ok()) return OutputError(name, ToStd(tensor.status().message()));
      return tensor;
    }
    case DataType::kFp16:
    case DataType::kBf16:
    case DataType::kInvalid:
      break;
  }
  return OutputError(name, StrCat(DataTypeName(dtype), " has no typed contents field"));
}

}  // namespace

absl::Status EncodeModelInferRequest(const InferSpec& request, inference::ModelInferRequest* out) {
  out->Clear();
  out->set_model_name(request.model_name);
  out->set_model_version(request.model_version);
  out->set_id(request.id);
  EncodeParameters(request.parameters, out->mutable_parameters());
  for (const InferInput& input : request.inputs) {
    const Tensor& tensor = input.tensor;
    if (tensor.empty()) {
      return absl::InvalidArgumentError(StrCat("input '", input.name, "' has no tensor"));
    }
    inference::ModelInferRequest::InferInputTensor* wire = out->add_inputs();
    wire->set_name(input.name);
    wire->set_datatype(std::string(DataTypeName(tensor.dtype())));
    for (int64_t dim : tensor.shape()) wire->add_shape(dim);
    EncodeParameters(input.parameters, wire->mutable_parameters());
    // raw_input_contents lists only the inputs not in shared memory (as the server reads it).
    if (input.parameters.Contains(kSharedMemoryRegionParameter)) continue;
    out->add_raw_input_contents()->assign(reinterpret_cast<const char*>(tensor.data()),
                                          tensor.byte_size());
  }
  for (const RequestedOutput& output : request.outputs) {
    inference::ModelInferRequest::InferRequestedOutputTensor* wire = out->add_outputs();
    wire->set_name(output.name);
    EncodeParameters(output.parameters, wire->mutable_parameters());
  }
  return absl::OkStatus();
}

absl::Status DecodeModelInferResponse(std::shared_ptr<const inference::ModelInferResponse> message,
                                      InferResponse* response) {
  response->outputs.clear();
  response->parameters = Parameters();
  response->model_name = message->model_name();
  response->model_version = message->model_version();
  response->id = message->id();
  DecodeParameters(message->parameters(), "response", &response->parameters, UnsetParameter::kSkip)
      .IgnoreError();  // cannot fail when skipping
  const bool raw = message->raw_output_contents_size() > 0;
  if (raw && message->raw_output_contents_size() != message->outputs_size()) {
    return absl::InternalError(StrCat("malformed infer response: ", message->outputs_size(),
                                      " outputs but ", message->raw_output_contents_size(),
                                      " raw_output_contents"));
  }
  response->outputs.reserve(message->outputs_size());
  for (int i = 0; i < message->outputs_size(); ++i) {
    const inference::ModelInferResponse::InferOutputTensor& wire = message->outputs(i);
    InferOutput& output = response->outputs.emplace_back();
    output.name = wire.name();
    DecodeParameters(wire.parameters(), "output", &output.parameters, UnsetParameter::kSkip)
        .IgnoreError();  // cannot fail when skipping
    const std::optional<DataType> dtype = ParseDataType(wire.datatype());
    if (!dtype.has_value()) {
      return OutputError(wire.name(), StrCat("unknown datatype '", wire.datatype(), "'"));
    }
    Shape shape(wire.shape().begin(), wire.shape().end());
    absl::StatusOr<Tensor> tensor;
    if (raw) {
      const std::string& bytes = message->raw_output_contents(i);
      // The view keeps the whole message alive; the message is never modified after decoding.
      tensor = Tensor::View(*dtype, std::move(shape), const_cast<char*>(bytes.data()), bytes.size(),
                            message);
      if (!tensor.ok()) return OutputError(wire.name(), ToStd(tensor.status().message()));
    } else {
      tensor = TensorFromContents(*dtype, std::move(shape), wire.contents(), wire.name());
      if (!tensor.ok()) return tensor.status();
    }
    output.tensor = *std::move(tensor);
  }
  return absl::OkStatus();
}

}  // namespace brigade::protocol::grpc
