#include "frontend/http/infer_response_encoder.h"

#include <type_traits>
#include <variant>

#include "core/status_macros.h"
#include "core/strings.h"
#include "frontend/http/json_tensor_data.h"

namespace brigade::frontend {
namespace {

void WriteParameterValue(const ParameterValue& value, JsonWriter* writer) {
  std::visit(
      [writer](const auto& v) {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, bool>) {
          writer->Bool(v);
        } else if constexpr (std::is_same_v<V, int64_t>) {
          writer->Int(v);
        } else if constexpr (std::is_same_v<V, uint64_t>) {
          writer->Uint(v);
        } else if constexpr (std::is_same_v<V, double>) {
          writer->Double(v);
        } else {
          writer->String(v);
        }
      },
      value);
}

// A rough upper bound of the JSON size, so the string grows once for typical responses.
size_t EstimateJsonBytes(const InferResponse& response) {
  size_t bytes = 128 + response.id.size() + response.model_name.size();
  for (const InferOutput& output : response.outputs) {
    bytes += 96 + output.name.size() + static_cast<size_t>(output.tensor.num_elements()) * 12;
  }
  return bytes;
}

}  // namespace

OutputEncoding OutputEncoding::FromRequest(const InferRequest& request) {
  OutputEncoding encoding;
  encoding.all_binary_ = request.all_outputs_binary;
  encoding.named_.reserve(request.outputs.size());
  for (const RequestedOutput& output : request.outputs) {
    encoding.named_.emplace_back(output.name, output.binary);
  }
  return encoding;
}

bool OutputEncoding::IsBinary(std::string_view output_name) const {
  for (const auto& [name, binary] : named_) {
    if (name == output_name) return binary;
  }
  return all_binary_;
}

void WriteParameters(const Parameters& parameters, JsonWriter* writer) {
  writer->BeginObject();
  for (const auto& [key, value] : parameters.entries()) {
    writer->Key(key);
    WriteParameterValue(value, writer);
  }
  writer->EndObject();
}

absl::StatusOr<EncodedInferResponse> EncodeInferResponse(const InferResponse& response,
                                                         const OutputEncoding& encoding) {
  EncodedInferResponse encoded;
  encoded.json.reserve(EstimateJsonBytes(response));
  JsonWriter writer(&encoded.json);
  writer.BeginObject();
  writer.Key("model_name");
  writer.String(response.model_name);
  writer.Key("model_version");
  writer.String(response.model_version);
  if (!response.id.empty()) {
    writer.Key("id");
    writer.String(response.id);
  }
  if (!response.parameters.empty()) {
    writer.Key("parameters");
    WriteParameters(response.parameters, &writer);
  }
  writer.Key("outputs");
  writer.BeginArray();
  for (const InferOutput& output : response.outputs) {
    const Tensor& tensor = output.tensor;
    const bool binary = encoding.IsBinary(output.name);
    writer.BeginObject();
    writer.Key("name");
    writer.String(output.name);
    writer.Key("datatype");
    writer.String(DataTypeName(tensor.dtype()));
    writer.Key("shape");
    writer.BeginArray();
    for (const int64_t dim : tensor.shape()) writer.Int(dim);
    writer.EndArray();
    if (binary || !output.parameters.empty()) {
      writer.Key("parameters");
      writer.BeginObject();
      for (const auto& [key, value] : output.parameters.entries()) {
        if (binary && key == "binary_data_size") continue;
        writer.Key(key);
        WriteParameterValue(value, &writer);
      }
      if (binary) {
        writer.Key("binary_data_size");
        writer.Uint(tensor.byte_size());
      }
      writer.EndObject();
    }
    if (binary) {
      encoded.binary = true;
      encoded.binary_parts.push_back(tensor.bytes());
    } else {
      writer.Key("data");
      BRIGADE_RETURN_IF_ERROR(WriteJsonTensorData(
          tensor, [&] { return StrCat("output '", output.name, "'"); }, &writer));
    }
    writer.EndObject();
  }
  writer.EndArray();
  writer.EndObject();
  return encoded;
}

}  // namespace brigade::frontend
