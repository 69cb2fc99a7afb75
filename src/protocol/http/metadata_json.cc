#include "protocol/http/metadata_json.h"

#include "core/status_macros.h"
#include "core/strings.h"
#include "protocol/http/json_dom_reader.h"
#include "protocol/http/json_writer.h"

namespace brigade::protocol::http {
namespace {

void WriteTensors(const std::vector<protocol::TensorMetadata>& tensors, JsonWriter* writer) {
  writer->BeginArray();
  for (const protocol::TensorMetadata& tensor : tensors) {
    writer->BeginObject();
    writer->Key("name");
    writer->String(tensor.name);
    writer->Key("datatype");
    writer->String(DataTypeName(tensor.dtype));
    writer->Key("shape");
    writer->BeginArray();
    for (const int64_t dim : tensor.shape) writer->Int(dim);
    writer->EndArray();
    writer->EndObject();
  }
  writer->EndArray();
}

}  // namespace

std::string EncodeServerMetadata(const protocol::ServerMetadata& metadata) {
  std::string json;
  JsonWriter writer(&json);
  writer.BeginObject();
  writer.Key("name");
  writer.String(metadata.name);
  writer.Key("version");
  writer.String(metadata.version);
  writer.Key("extensions");
  writer.BeginArray();
  for (const std::string& extension : metadata.extensions) writer.String(extension);
  writer.EndArray();
  writer.EndObject();
  return json;
}

std::string EncodeModelMetadata(const protocol::ModelMetadata& metadata) {
  std::string json;
  JsonWriter writer(&json);
  writer.BeginObject();
  writer.Key("name");
  writer.String(metadata.name);
  writer.Key("versions");
  writer.BeginArray();
  for (const std::string& version : metadata.versions) writer.String(version);
  writer.EndArray();
  writer.Key("platform");
  writer.String(metadata.platform);
  writer.Key("inputs");
  WriteTensors(metadata.inputs, &writer);
  writer.Key("outputs");
  WriteTensors(metadata.outputs, &writer);
  writer.EndObject();
  return json;
}

std::string EncodeError(std::string_view message) {
  std::string json;
  JsonWriter writer(&json);
  writer.BeginObject();
  writer.Key("error");
  writer.String(message);
  writer.EndObject();
  return json;
}

// The client's half: the metadata and error bodies read back.
namespace {

absl::Status ReadStringArray(simdjson::dom::object object, std::string_view key,
                             std::string_view what, std::vector<std::string>* out) {
  simdjson::dom::element value;
  if (object[key].get(value) != simdjson::SUCCESS) return absl::OkStatus();
  simdjson::dom::array items;
  if (value.get(items) != simdjson::SUCCESS) {
    return MalformedResponse(what, StrCat("'", key, "' is not an array"));
  }
  for (simdjson::dom::element item : items) {
    std::string_view text;
    if (item.get(text) != simdjson::SUCCESS) {
      return MalformedResponse(what, StrCat("'", key, "' holds a non-string"));
    }
    out->emplace_back(text);
  }
  return absl::OkStatus();
}

absl::Status ReadTensorMetadata(simdjson::dom::object object, std::string_view key,
                                std::string_view what, std::vector<protocol::TensorMetadata>* out) {
  simdjson::dom::element value;
  if (object[key].get(value) != simdjson::SUCCESS) return absl::OkStatus();
  simdjson::dom::array items;
  if (value.get(items) != simdjson::SUCCESS) {
    return MalformedResponse(what, StrCat("'", key, "' is not an array"));
  }
  for (simdjson::dom::element item : items) {
    simdjson::dom::object tensor;
    if (item.get(tensor) != simdjson::SUCCESS) {
      return MalformedResponse(what, StrCat("an entry of '", key, "' is not an object"));
    }
    protocol::TensorMetadata& metadata = out->emplace_back();
    BRIGADE_ASSIGN_OR_RETURN(std::string_view name, RequiredString(tensor, "name", what));
    metadata.name.assign(name);
    BRIGADE_ASSIGN_OR_RETURN(std::string_view datatype, RequiredString(tensor, "datatype", what));
    metadata.datatype.assign(datatype);
    metadata.dtype = ParseDataType(datatype).value_or(DataType::kInvalid);
    simdjson::dom::element shape;
    if (tensor["shape"].get(shape) != simdjson::SUCCESS) {
      return MalformedResponse(what, StrCat("tensor '", name, "' has no shape"));
    }
    BRIGADE_ASSIGN_OR_RETURN(metadata.shape, ReadShape(shape, what));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<protocol::ServerMetadata> DecodeServerMetadata(simdjson::dom::parser& parser,
                                                              std::string_view json) {
  constexpr std::string_view kWhat = "server metadata";
  BRIGADE_ASSIGN_OR_RETURN(simdjson::dom::object object, ParseJsonObject(parser, json, kWhat));
  protocol::ServerMetadata metadata;
  BRIGADE_ASSIGN_OR_RETURN(std::string_view name, OptionalString(object, "name", kWhat));
  metadata.name.assign(name);
  BRIGADE_ASSIGN_OR_RETURN(std::string_view version, OptionalString(object, "version", kWhat));
  metadata.version.assign(version);
  BRIGADE_RETURN_IF_ERROR(ReadStringArray(object, "extensions", kWhat, &metadata.extensions));
  return metadata;
}

absl::StatusOr<protocol::ModelMetadata> DecodeModelMetadata(simdjson::dom::parser& parser,
                                                            std::string_view json) {
  constexpr std::string_view kWhat = "model metadata";
  BRIGADE_ASSIGN_OR_RETURN(simdjson::dom::object object, ParseJsonObject(parser, json, kWhat));
  protocol::ModelMetadata metadata;
  BRIGADE_ASSIGN_OR_RETURN(std::string_view name, RequiredString(object, "name", kWhat));
  metadata.name.assign(name);
  BRIGADE_ASSIGN_OR_RETURN(std::string_view platform, OptionalString(object, "platform", kWhat));
  metadata.platform.assign(platform);
  BRIGADE_RETURN_IF_ERROR(ReadStringArray(object, "versions", kWhat, &metadata.versions));
  BRIGADE_RETURN_IF_ERROR(ReadTensorMetadata(object, "inputs", kWhat, &metadata.inputs));
  BRIGADE_RETURN_IF_ERROR(ReadTensorMetadata(object, "outputs", kWhat, &metadata.outputs));
  return metadata;
}

std::string ErrorMessageFromBody(simdjson::dom::parser& parser, std::string_view body,
                                 std::string_view fallback) {
  simdjson::dom::element root;
  std::string_view message;
  if (parser.parse(body.data(), body.size(), /*realloc_if_needed=*/false).get(root) ==
          simdjson::SUCCESS &&
      root["error"].get(message) == simdjson::SUCCESS) {
    return std::string(message);
  }
  while (!body.empty() && (body.back() == '\n' || body.back() == '\r' || body.back() == ' ')) {
    body.remove_suffix(1);
  }
  if (body.empty()) return std::string(fallback);
  constexpr size_t kMaxBytes = 512;
  return std::string(body.substr(0, kMaxBytes));
}

}  // namespace brigade::protocol::http
