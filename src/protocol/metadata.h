#ifndef BRIGADE_PROTOCOL_METADATA_H_
#define BRIGADE_PROTOCOL_METADATA_H_

// The metadata results of the KServe v2 protocol: server metadata (GET /v2) and model metadata
// (GET /v2/models/<name>[/versions/<v>]), as the server produces them and as the client reads
// them back. Plain value types, independent of the wire (JSON or gRPC); no behaviour.

#include <string>
#include <vector>

#include "core/data_type.h"
#include "core/shape.h"

namespace brigade::protocol {

struct TensorMetadata {
  std::string name;
  DataType dtype = DataType::kInvalid;
  // -1 marks a variable dimension (the batch dimension included).
  Shape shape;
  // The datatype as a decoder read it off the wire, kept when it names no type Brigade knows
  // (then `dtype` is kInvalid); encoders write `dtype` and ignore this.
  std::string datatype;
};

struct ModelMetadata {
  std::string name;
  std::vector<std::string> versions;  // ready versions, ascending
  std::string platform;
  std::vector<TensorMetadata> inputs;
  std::vector<TensorMetadata> outputs;
};

struct ServerMetadata {
  std::string name;
  std::string version;
  std::vector<std::string> extensions;
};

}  // namespace brigade::protocol

#endif  // BRIGADE_PROTOCOL_METADATA_H_
