#include "protocol/http/infer_request_json.h"

#include <cstring>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/status_macros.h"
#include "core/strings.h"
#include "protocol/http/json_reader.h"
#include "protocol/http/json_tensor_data.h"
#include "protocol/http/json_writer.h"
#include "protocol/infer_parameters.h"
#include "protocol/model_version.h"
#include "protocol/shared_memory.h"

namespace brigade::protocol::http {
namespace {

using simdjson::ondemand::array;
using simdjson::ondemand::field;
using simdjson::ondemand::object;
using simdjson::ondemand::value;

// JSON depth of an input's `data` value: root object (1) → inputs (2) → input (3) → data (4).
constexpr int kInputDataDepth = 4;

absl::Status WithContext(std::string_view label, const absl::Status& status) {
  return absl::Status(status.code(), StrCat(label, ": ", status.message()));
}

absl::Status DuplicateField(std::string_view where, std::string_view key) {
  return absl::InvalidArgumentError(StrCat(where, " has the field '", key, "' twice"));
}

// Marks `key` seen in `seen`; false when it already was.
bool FirstTime(uint32_t bit, uint32_t* seen) {
  if ((*seen & bit) != 0) return false;
  *seen |= bit;
  return true;
}

absl::StatusOr<Shape> ReadRequestShape(value& json, LazyText label) {
  array dims;
  if (json.get_array().get(dims) != simdjson::SUCCESS) {
    return absl::InvalidArgumentError(
        StrCat(label(), ": shape must be an array of integers, got ", TokenText(json)));
  }
  Shape shape;
  for (auto dim_result : dims) {
    value dim_json;
    if (auto error = dim_result.get(dim_json)) return JsonError(StrCat(label(), " shape"), error);
    int64_t dim;
    if (dim_json.get_int64().get(dim) != simdjson::SUCCESS) {
      return absl::InvalidArgumentError(StrCat(label(), ": shape dimension ", shape.size(), " (",
                                               TokenText(dim_json), ") is not an integer"));
    }
    if (dim < 0) {
      return absl::InvalidArgumentError(StrCat(label(), ": shape dimension ", shape.size(), " is ",
                                               dim, "; dimensions must be >= 0"));
    }
    shape.push_back(dim);
  }
  absl::StatusOr<int64_t> count = ElementCount(shape);
  if (!count.ok()) return WithContext(StrCat(label(), " shape"), count.status());
  return shape;
}

// Reads one request: the root object's fields, then the checks that need all of them.
class RequestReader {
 public:
  RequestReader(const HttpInferInput& input, const std::shared_ptr<BodyBuffer>& body,
                size_t json_bytes, bool has_binary_section, InferRequest* request)
      : input_(input),
        body_(body),
        json_bytes_(json_bytes),
        has_binary_section_(has_binary_section),
        binary_offset_(json_bytes),
        request_(request) {}

  absl::Status ReadRoot(object& root) {
    enum : uint32_t { kId = 1, kParameters = 2, kInputs = 4, kOutputs = 8 };
    uint32_t seen = 0;
    for (auto field_result : root) {
      field entry;
      if (auto error = std::move(field_result).get(entry)) return JsonError(kWhere, error);
      if (entry.key() == "id") {
        if (!FirstTime(kId, &seen)) return DuplicateField(kWhere, "id");
        BRIGADE_ASSIGN_OR_RETURN(std::string_view id, ReadString(entry.value(), [] {
                                   return std::string("request id");
                                 }));
        request_->id = std::string(id);
      } else if (entry.key() == "parameters") {
        if (!FirstTime(kParameters, &seen)) return DuplicateField(kWhere, "parameters");
        BRIGADE_RETURN_IF_ERROR(ReadParameters(
            entry.value(), [] { return std::string("request parameters"); },
            &request_->parameters));
        BRIGADE_RETURN_IF_ERROR(
            CheckParameters(ParameterScope::kRequest, request_->parameters, "request"));
      } else if (entry.key() == "inputs") {
        if (!FirstTime(kInputs, &seen)) return DuplicateField(kWhere, "inputs");
        BRIGADE_RETURN_IF_ERROR(ReadInputs(entry.value()));
      } else if (entry.key() == "outputs") {
        if (!FirstTime(kOutputs, &seen)) return DuplicateField(kWhere, "outputs");
        BRIGADE_RETURN_IF_ERROR(ReadOutputs(entry.value()));
      } else {
        return UnknownField(kWhere, entry);
      }
    }
    if ((seen & kInputs) == 0) {
      return absl::InvalidArgumentError("request has no 'inputs' field");
    }
    return absl::OkStatus();
  }

  // Resolves the reserved request parameters and checks the binary section was used exactly.
  absl::Status Finish() {
    Parameters& parameters = request_->parameters;
    if (parameters.Contains("binary_data_output")) {
      std::optional<bool> all_binary = parameters.GetBool("binary_data_output");
      if (!all_binary) {
        return absl::InvalidArgumentError(
            "request parameter 'binary_data_output' must be true or false");
      }
      request_->all_outputs_binary = *all_binary;
      parameters.Erase("binary_data_output");
    }
    for (size_t i = 0; i < request_->outputs.size(); ++i) {
      request_->outputs[i].binary = output_binary_[i].value_or(request_->all_outputs_binary);
    }
    if (parameters.Contains("priority")) {
      std::optional<int64_t> level = parameters.GetInt("priority");
      if (!level || *level < 0 || *level > std::numeric_limits<uint32_t>::max()) {
        return absl::InvalidArgumentError(
            "request parameter 'priority' must be an integer in [0, 4294967295]");
      }
      request_->priority = static_cast<uint32_t>(*level);
      parameters.Erase("priority");
    }
    if (const ParameterValue* timeout = parameters.Find("timeout")) {
      // A uint64 beyond int64's range is ~292,000 years of microseconds: leave it infinite.
      if (!std::holds_alternative<uint64_t>(*timeout)) {
        const int64_t* timeout_us = std::get_if<int64_t>(timeout);
        if (timeout_us == nullptr || *timeout_us < 0) {
          return absl::InvalidArgumentError(
              "request parameter 'timeout' must be a non-negative integer (microseconds)");
        }
        request_->deadline = Deadline::AfterUs(input_.arrival_ns, *timeout_us);
      }
      parameters.Erase("timeout");
    }
    if (has_binary_section_ && binary_offset_ != body_->size()) {
      return absl::InvalidArgumentError(
          StrCat("the binary section after the JSON header has ", body_->size() - json_bytes_,
                 " bytes but the inputs' binary_data_size parameters add up to ",
                 binary_offset_ - json_bytes_));
    }
    return absl::OkStatus();
  }

 private:
  static constexpr std::string_view kWhere = "request";

  // Calls read(element, index) for each element of the request's array `field`.
  template <typename ReadFn>
  static absl::Status ReadArray(value& json, std::string_view field, ReadFn&& read) {
    array elements;
    if (json.get_array().get(elements) != simdjson::SUCCESS) {
      return absl::InvalidArgumentError(
          StrCat("'", field, "' must be an array, got ", TokenText(json)));
    }
    size_t index = 0;
    for (auto element_result : elements) {
      value element;
      if (auto error = element_result.get(element)) return JsonError(field, error);
      BRIGADE_RETURN_IF_ERROR(read(element, index++));
    }
    return absl::OkStatus();
  }

  absl::Status ReadInputs(value& json) {
    return ReadArray(json, "inputs",
                     [this](value& input, size_t index) { return ReadInput(input, index); });
  }

  absl::Status ReadInput(value& json, size_t index) {
    InferInput input;
    bool named = false;
    auto label = [&]() -> std::string {
      return named ? StrCat("input '", input.name, "'") : StrCat("inputs[", index, "]");
    };
    object fields;
    if (json.get_object().get(fields) != simdjson::SUCCESS) {
      return absl::InvalidArgumentError(
          StrCat(label(), " must be a JSON object, got ", TokenText(json)));
    }
    enum : uint32_t { kName = 1, kDatatype = 2, kShape = 4, kParameters = 8, kData = 16 };
    uint32_t seen = 0;
    DataType dtype = DataType::kInvalid;
    Shape shape;
    std::optional<Tensor> tensor;
    for (auto field_result : fields) {
      field entry;
      if (auto error = std::move(field_result).get(entry)) return JsonError(label(), error);
      if (entry.key() == "name") {
        if (!FirstTime(kName, &seen)) return DuplicateField(label(), "name");
        BRIGADE_ASSIGN_OR_RETURN(std::string_view name, ReadString(entry.value(), [&] {
                                   return StrCat(label(), " name");
                                 }));
        input.name = std::string(name);
        named = true;
      } else if (entry.key() == "datatype") {
        if (!FirstTime(kDatatype, &seen)) return DuplicateField(label(), "datatype");
        BRIGADE_ASSIGN_OR_RETURN(std::string_view name, ReadString(entry.value(), [&] {
                                   return StrCat(label(), " datatype");
                                 }));
        std::optional<DataType> parsed = ParseDataType(name);
        if (!parsed || *parsed == DataType::kInvalid) {
          return absl::InvalidArgumentError(StrCat(label(), ": unknown datatype '", name, "'"));
        }
        dtype = *parsed;
      } else if (entry.key() == "shape") {
        if (!FirstTime(kShape, &seen)) return DuplicateField(label(), "shape");
        BRIGADE_ASSIGN_OR_RETURN(shape, ReadRequestShape(entry.value(), label));
      } else if (entry.key() == "parameters") {
        if (!FirstTime(kParameters, &seen)) return DuplicateField(label(), "parameters");
        BRIGADE_RETURN_IF_ERROR(ReadParameters(
            entry.value(), [&] { return StrCat(label(), " parameters"); }, &input.parameters));
      } else if (entry.key() == "data") {
        if (!FirstTime(kData, &seen)) return DuplicateField(label(), "data");
        // Usual order (name, shape, datatype, data): read it now. Otherwise it is skipped here
        // and read once the datatype and shape are known.
        if ((seen & (kDatatype | kShape)) == (kDatatype | kShape)) {
          BRIGADE_ASSIGN_OR_RETURN(tensor, ReadJsonTensorData(entry.value(), dtype, shape, label,
                                                              kInputDataDepth, json_bytes_));
        }
      } else {
        return UnknownField(label(), entry);
      }
    }
    if ((seen & kName) == 0) return absl::InvalidArgumentError(StrCat(label(), " has no 'name'"));
    if ((seen & kDatatype) == 0) {
      return absl::InvalidArgumentError(StrCat(label(), " has no 'datatype'"));
    }
    if ((seen & kShape) == 0) return absl::InvalidArgumentError(StrCat(label(), " has no 'shape'"));
    if (request_->FindInput(input.name) != nullptr) {
      return absl::InvalidArgumentError(StrCat(label(), " appears twice in 'inputs'"));
    }
    // Before the data is looked for: a shared-memory input has none, and must hear why.
    BRIGADE_RETURN_IF_ERROR(CheckParameters(ParameterScope::kInput, input.parameters, label()));
    BRIGADE_ASSIGN_OR_RETURN(std::optional<SharedMemoryRef> shared,
                             TakeSharedMemoryRef(&input.parameters, label()));

    if (shared) {
      if ((seen & kData) != 0 || input.parameters.Contains("binary_data_size")) {
        return absl::InvalidArgumentError(StrCat(
            label(), " has a shared_memory_region parameter and also 'data' or binary_data_size"));
      }
      BRIGADE_ASSIGN_OR_RETURN(tensor, SharedMemoryInputTensor(input_.shared_memory, *shared, dtype,
                                                               std::move(shape), label()));
    } else if (input.parameters.Contains("binary_data_size")) {
      std::optional<int64_t> byte_size = input.parameters.GetInt("binary_data_size");
      if (!byte_size || *byte_size < 0) {
        return absl::InvalidArgumentError(
            StrCat(label(), ": parameter 'binary_data_size' must be a non-negative integer"));
      }
      if ((seen & kData) != 0) {
        return absl::InvalidArgumentError(
            StrCat(label(), " has both 'data' and a binary_data_size parameter"));
      }
      input.parameters.Erase("binary_data_size");
      BRIGADE_ASSIGN_OR_RETURN(
          tensor, ReadBinary(label, dtype, std::move(shape), static_cast<uint64_t>(*byte_size)));
    } else if ((seen & kData) == 0) {
      return absl::InvalidArgumentError(StrCat(
          label(), " has neither 'data' nor a binary_data_size or shared_memory_region parameter"));
    } else if (!tensor) {
      // `data` came before `datatype` or `shape`: rewind this object and read it now.
      value data;
      if (auto error = fields.reset().error()) return JsonError(label(), error);
      if (auto error = fields.find_field_unordered("data").get(data)) {
        return JsonError(label(), error);
      }
      BRIGADE_ASSIGN_OR_RETURN(tensor, ReadJsonTensorData(data, dtype, std::move(shape), label,
                                                          kInputDataDepth, json_bytes_));
    }
    input.tensor = *std::move(tensor);
    request_->inputs.push_back(std::move(input));
    return absl::OkStatus();
  }

  absl::StatusOr<Tensor> ReadBinary(LazyText label, DataType dtype, Shape shape,
                                    uint64_t byte_size) {
    if (!has_binary_section_) {
      return absl::InvalidArgumentError(
          StrCat(label(),
                 " has a binary_data_size parameter but the request has no binary "
                 "section (no Inference-Header-Content-Length header)"));
    }
    const size_t remaining = body_->size() - binary_offset_;
    if (byte_size > remaining) {
      return absl::InvalidArgumentError(StrCat(label(), ": binary_data_size ", byte_size,
                                               " exceeds the ", remaining,
                                               " bytes left in the binary section"));
    }
    std::byte* bytes = body_->data() + binary_offset_;
    // Borrow the body when the bytes sit where typed access is defined (element-aligned; the
    // transport aligns the start of the binary section); copy into aligned storage otherwise.
    const size_t element_size = DataTypeSize(dtype);
    const bool misaligned =
        element_size > 1 && reinterpret_cast<uintptr_t>(bytes) % element_size != 0;
    absl::StatusOr<Tensor> tensor =
        misaligned ? Tensor::Copy(dtype, std::move(shape), {bytes, byte_size})
                   : Tensor::View(dtype, std::move(shape), bytes, byte_size, body_);
    if (!tensor.ok()) return WithContext(StrCat(label(), " binary data"), tensor.status());
    binary_offset_ += byte_size;
    return tensor;
  }

  absl::Status ReadOutputs(value& json) {
    return ReadArray(json, "outputs",
                     [this](value& output, size_t index) { return ReadOutput(output, index); });
  }

  absl::Status ReadOutput(value& json, size_t index) {
    RequestedOutput output;
    bool named = false;
    auto label = [&]() -> std::string {
      return named ? StrCat("output '", output.name, "'") : StrCat("outputs[", index, "]");
    };
    object fields;
    if (json.get_object().get(fields) != simdjson::SUCCESS) {
      return absl::InvalidArgumentError(
          StrCat(label(), " must be a JSON object, got ", TokenText(json)));
    }
    enum : uint32_t { kName = 1, kParameters = 2 };
    uint32_t seen = 0;
    for (auto field_result : fields) {
      field entry;
      if (auto error = std::move(field_result).get(entry)) return JsonError(label(), error);
      if (entry.key() == "name") {
        if (!FirstTime(kName, &seen)) return DuplicateField(label(), "name");
        BRIGADE_ASSIGN_OR_RETURN(std::string_view name, ReadString(entry.value(), [&] {
                                   return StrCat(label(), " name");
                                 }));
        output.name = std::string(name);
        named = true;
      } else if (entry.key() == "parameters") {
        if (!FirstTime(kParameters, &seen)) return DuplicateField(label(), "parameters");
        BRIGADE_RETURN_IF_ERROR(ReadParameters(
            entry.value(), [&] { return StrCat(label(), " parameters"); }, &output.parameters));
      } else {
        return UnknownField(label(), entry);
      }
    }
    if ((seen & kName) == 0) return absl::InvalidArgumentError(StrCat(label(), " has no 'name'"));
    BRIGADE_RETURN_IF_ERROR(CheckParameters(ParameterScope::kOutput, output.parameters, label()));
    for (const RequestedOutput& other : request_->outputs) {
      if (other.name == output.name) {
        return absl::InvalidArgumentError(StrCat(label(), " appears twice in 'outputs'"));
      }
    }
    std::optional<bool> binary;
    if (output.parameters.Contains("binary_data")) {
      binary = output.parameters.GetBool("binary_data");
      if (!binary) {
        return absl::InvalidArgumentError(
            StrCat(label(), ": parameter 'binary_data' must be true or false"));
      }
      output.parameters.Erase("binary_data");
    }
    output_binary_.push_back(binary);
    request_->outputs.push_back(std::move(output));
    return absl::OkStatus();
  }

  const HttpInferInput& input_;
  const std::shared_ptr<BodyBuffer>& body_;
  const size_t json_bytes_;
  const bool has_binary_section_;
  // Absolute offset in the body of the next binary input's first byte.
  size_t binary_offset_;
  InferRequest* request_;
  // Per requested output, its explicit `binary_data` (resolved against binary_data_output, which
  // may come later in the document, in Finish()).
  std::vector<std::optional<bool>> output_binary_;
};

// Triton's raw binary request: the body is the model's only input, batch 1, outputs binary.
absl::Status ReadRawInput(const HttpInferInput& input, const std::shared_ptr<BodyBuffer>& body,
                          InferRequest* request) {
  const protocol::TensorMetadata* spec = input.raw_input;
  if (spec == nullptr) {
    return absl::InvalidArgumentError(
        StrCat(kInferenceHeaderContentLength,
               " 0 (a raw binary request without a JSON header) "
               "needs a model with exactly one input; model '",
               input.model_name, "' has several: send a JSON header describing the inputs"));
  }
  const std::string_view bytes(reinterpret_cast<const char*>(body->data()), body->size());
  auto error = [&](std::string_view why) {
    return absl::InvalidArgumentError(StrCat("raw binary request for input '", spec->name, "' (",
                                             DataTypeName(spec->dtype), ShapeToString(spec->shape),
                                             "): ", why));
  };
  Shape shape = spec->shape;
  absl::StatusOr<Tensor> tensor;
  if (spec->dtype == DataType::kBytes) {
    for (int64_t& dim : shape) {
      if (dim == -1) dim = 1;
    }
    if (ElementCount(shape).value_or(0) != 1) {
      return error("a raw body fills exactly one BYTES element");
    }
    if (bytes.size() > std::numeric_limits<uint32_t>::max()) {
      return error("a BYTES element holds at most 4 GiB - 1");
    }
    // One element in the tensor's serialized form: 4-byte little-endian length, then the bytes.
    tensor = Tensor::AllocateBytes(std::move(shape), sizeof(uint32_t) + bytes.size());
    if (tensor.ok()) {
      const uint32_t length = static_cast<uint32_t>(bytes.size());
      std::byte* out = tensor->mutable_data();
      for (size_t i = 0; i < sizeof(length); ++i) {
        out[i] = static_cast<std::byte>((length >> (8 * i)) & 0xff);
      }
      std::memcpy(out + sizeof(length), bytes.data(), bytes.size());
    }
  } else {
    const size_t element_size = DataTypeSize(spec->dtype);
    if (element_size == 0) return error("the input's data type has no raw form");
    if (bytes.empty()) return error("the body is empty");
    if (bytes.size() % element_size != 0) {
      return error(StrCat(bytes.size(), " bytes are not a whole number of ", element_size,
                          "-byte elements"));
    }
    int64_t last_variable = -1;
    for (size_t i = 0; i < shape.size(); ++i) {
      if (shape[i] == -1) last_variable = static_cast<int64_t>(i);
    }
    for (int64_t& dim : shape) {
      if (dim == -1) dim = 1;
    }
    const int64_t fixed = ElementCount(shape).value_or(0);
    const int64_t elements = static_cast<int64_t>(bytes.size() / element_size);
    if (last_variable >= 0 && fixed > 0 && elements % fixed == 0) {
      shape[last_variable] = elements / fixed;
    }
    if (ElementCount(shape).value_or(-1) != elements) {
      return error(StrCat(elements, " elements do not fit the input's shape"));
    }
    tensor = Tensor::Copy(spec->dtype, std::move(shape), body->bytes());
  }
  if (!tensor.ok()) return error(ToStd(tensor.status().message()));
  request->inputs.push_back(InferInput{spec->name, *std::move(tensor), {}});
  request->all_outputs_binary = true;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<InferRequest>> DecodeInferRequest(const HttpInferInput& input) {
  const std::shared_ptr<BodyBuffer>& body =
      input.body != nullptr ? input.body : BodyBuffer::Empty();
  auto request = std::make_unique<InferRequest>();
  request->model_name = std::string(input.model_name);
  BRIGADE_ASSIGN_OR_RETURN(request->model_version, ParseModelVersion(input.model_version));

  size_t json_bytes = body->size();
  const bool has_binary_section = input.header_length.has_value();
  if (has_binary_section) {
    uint64_t header_length;
    if (!ParseInteger(*input.header_length, &header_length)) {
      return absl::InvalidArgumentError(StrCat(kInferenceHeaderContentLength, " '",
                                               *input.header_length,
                                               "' is not a non-negative integer"));
    }
    if (header_length > body->size()) {
      return absl::InvalidArgumentError(StrCat(kInferenceHeaderContentLength, " ", header_length,
                                               " exceeds the body size ", body->size()));
    }
    if (header_length == 0) {
      BRIGADE_RETURN_IF_ERROR(ReadRawInput(input, body, request.get()));
      return request;
    }
    json_bytes = header_length;
  }

  const std::string_view what = has_binary_section ? "the JSON header" : "the request body";
  JsonDocument document(*body, json_bytes);
  BRIGADE_ASSIGN_OR_RETURN(simdjson::ondemand::object root, document.RootObject(what));
  RequestReader reader(input, body, json_bytes, has_binary_section, request.get());
  BRIGADE_RETURN_IF_ERROR(reader.ReadRoot(root));
  BRIGADE_RETURN_IF_ERROR(document.FinishDocument(what));
  BRIGADE_RETURN_IF_ERROR(reader.Finish());
  return request;
}

// The client's half: an InferSpec written as a request body.
namespace {

// Writes `"parameters":{...}` from `parameters` plus the codec's own entry `key`: `value` (none
// when `key` is empty), or nothing when there is neither.
void WriteRequestParameters(const Parameters& parameters, std::string_view key,
                            const ParameterValue& value, JsonWriter* writer) {
  if (parameters.empty() && key.empty()) return;
  writer->Field("parameters");
  WriteParametersWith(parameters, key, value, writer);
}

}  // namespace

absl::Status EncodeInferRequest(const InferSpec& request, std::string* json,
                                std::vector<std::span<const std::byte>>* binary_parts) {
  json->clear();
  binary_parts->clear();
  JsonWriter writer(json);
  writer.BeginObject();
  if (!request.id.empty()) {
    writer.Field("id");
    writer.String(request.id);
  }
  WriteRequestParameters(request.parameters, request.binary_outputs ? "binary_data_output" : "",
                         ParameterValue(true), &writer);

  writer.Field("inputs");
  writer.BeginArray();
  for (const InferInput& input : request.inputs) {
    const Tensor& tensor = input.tensor;
    if (tensor.empty()) {
      return absl::InvalidArgumentError(StrCat("input '", input.name, "' has no tensor"));
    }
    writer.BeginObject();
    writer.Field("name");
    writer.String(input.name);
    writer.Field("shape");
    writer.BeginArray();
    for (const int64_t dim : tensor.shape()) writer.Int(dim);
    writer.EndArray();
    writer.Field("datatype");
    writer.String(DataTypeName(tensor.dtype()));
    if (input.parameters.Contains(kSharedMemoryRegionParameter)) {
      // The server reads the bytes from the client's region: only the reference travels.
      WriteRequestParameters(input.parameters, "", ParameterValue(false), &writer);
    } else if (request.binary_inputs) {
      WriteRequestParameters(input.parameters, "binary_data_size",
                             ParameterValue(static_cast<int64_t>(tensor.byte_size())), &writer);
      binary_parts->push_back(tensor.bytes());
    } else {
      WriteRequestParameters(input.parameters, "", ParameterValue(false), &writer);
      writer.Field("data");
      BRIGADE_RETURN_IF_ERROR(WriteJsonTensorData(
          tensor, [&] { return StrCat("input '", input.name, "'"); }, &writer,
          JsonDataSide::kRequestInput));
    }
    writer.EndObject();
  }
  writer.EndArray();

  if (!request.outputs.empty()) {
    writer.Field("outputs");
    writer.BeginArray();
    for (const RequestedOutput& output : request.outputs) {
      writer.BeginObject();
      writer.Field("name");
      writer.String(output.name);
      WriteRequestParameters(output.parameters, output.binary ? "binary_data" : "",
                             ParameterValue(true), &writer);
      writer.EndObject();
    }
    writer.EndArray();
  }
  writer.EndObject();
  return absl::OkStatus();
}

}  // namespace brigade::protocol::http
