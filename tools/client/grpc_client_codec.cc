#include "tools/client/grpc_client_codec.h"

#include <cstring>
#include <string>
#include <type_traits>
#include <variant>

#include "core/status_macros.h"
#include "core/strings.h"

namespace brigade::client {
namespace {

using InferParameterMap = google::protobuf::Map<std::string, inference::InferParameter>;

void EncodeParameters(const Parameters& parameters, InferParameterMap* out) {
  for (const Parameters::Entry& entry : parameters.entries()) {
    inference::InferParameter& parameter = (*out)[entry.first];
    std::visit(
        [&parameter](const auto& v) {
          using V = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<V, bool>) {
            parameter.set_bool_param(v);
          } else if constexpr (std::is_same_v<V, int64_t>) {
            parameter.set_int64_param(v);
          } else if constexpr (std::is_same_v<V, uint64_t>) {
            parameter.set_uint64_param(v);
          } else if constexpr (std::is_same_v<V, double>) {
            parameter.set_double_param(v);
          } else {
            parameter.set_string_param(v);
          }
        },
        entry.second);
  }
}

void DecodeParameters(const InferParameterMap& map, Parameters* out) {
  for (const auto& [key, parameter] : map) {
    switch (parameter.parameter_choice_case()) {
      case inference::InferParameter::kBoolParam:
        out->Set(key, parameter.bool_param());
        break;
      case inference::InferParameter::kInt64Param:
        out->Set(key, parameter.int64_param());
        break;
      case inference::InferParameter::kStringParam:
        out->Set(key, parameter.string_param());
        break;
      case inference::InferParameter::kDoubleParam:
        out->Set(key, parameter.double_param());
        break;
      case inference::InferParameter::kUint64Param:
        out->Set(key, parameter.uint64_param());
        break;
      case inference::InferParameter::PARAMETER_CHOICE_NOT_SET:
        break;
    }
  }
}

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

absl::Status BuildModelInferRequest(const InferSpec& request, inference::ModelInferRequest* out) {
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
  DecodeParameters(message->parameters(), &response->parameters);
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
    DecodeParameters(wire.parameters(), &output.parameters);
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

protocol::ServerMetadata FromProto(const inference::ServerMetadataResponse& message) {
  protocol::ServerMetadata metadata;
  metadata.name = message.name();
  metadata.version = message.version();
  metadata.extensions.assign(message.extensions().begin(), message.extensions().end());
  return metadata;
}

protocol::ModelMetadata FromProto(const inference::ModelMetadataResponse& message) {
  protocol::ModelMetadata metadata;
  metadata.name = message.name();
  metadata.platform = message.platform();
  metadata.versions.assign(message.versions().begin(), message.versions().end());
  auto convert = [](const auto& tensors, std::vector<protocol::TensorMetadata>* out) {
    for (const auto& tensor : tensors) {
      protocol::TensorMetadata& converted = out->emplace_back();
      converted.name = tensor.name();
      converted.datatype = tensor.datatype();
      converted.dtype = ParseDataType(tensor.datatype()).value_or(DataType::kInvalid);
      converted.shape.assign(tensor.shape().begin(), tensor.shape().end());
    }
  };
  convert(message.inputs(), &metadata.inputs);
  convert(message.outputs(), &metadata.outputs);
  return metadata;
}

std::vector<protocol::ModelStatistics> FromProto(const inference::ModelStatisticsResponse& message) {
  auto duration = [](const inference::StatisticDuration& d) {
    return protocol::StatDuration{.count = d.count(), .ns = d.ns()};
  };
  std::vector<protocol::ModelStatistics> result;
  for (const inference::ModelStatistics& model : message.model_stats()) {
    protocol::ModelStatistics& stats = result.emplace_back();
    stats.name = model.name();
    stats.version = model.version();
    stats.last_inference_ms = model.last_inference();
    stats.inference_count = model.inference_count();
    stats.execution_count = model.execution_count();
    const inference::InferStatistics& s = model.inference_stats();
    stats.inference_stats = protocol::InferStatistics{.success = duration(s.success()),
                                            .fail = duration(s.fail()),
                                            .queue = duration(s.queue()),
                                            .compute_input = duration(s.compute_input()),
                                            .compute_infer = duration(s.compute_infer()),
                                            .compute_output = duration(s.compute_output()),
                                            .cache_hit = duration(s.cache_hit()),
                                            .cache_miss = duration(s.cache_miss())};
    for (const inference::InferBatchStatistics& batch : model.batch_stats()) {
      stats.batch_stats.push_back(
          protocol::BatchStatistics{.batch_size = batch.batch_size(),
                          .compute_input = duration(batch.compute_input()),
                          .compute_infer = duration(batch.compute_infer()),
                          .compute_output = duration(batch.compute_output())});
    }
  }
  return result;
}

std::vector<protocol::RepositoryIndexEntry> FromProto(const inference::RepositoryIndexResponse& message) {
  std::vector<protocol::RepositoryIndexEntry> result;
  for (const inference::RepositoryIndexResponse::ModelIndex& model : message.models()) {
    result.push_back(protocol::RepositoryIndexEntry{.name = model.name(),
                                     .version = model.version(),
                                     .state = model.state(),
                                     .reason = model.reason()});
  }
  return result;
}

}  // namespace brigade::client
