#include "frontend/http/metadata_encoder.h"

#include "frontend/http/json_writer.h"

namespace brigade::frontend {
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

}  // namespace brigade::frontend
