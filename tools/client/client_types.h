#ifndef BRIGADE_TOOLS_CLIENT_CLIENT_TYPES_H_
#define BRIGADE_TOOLS_CLIENT_CLIENT_TYPES_H_

// The values a KServe v2 client sends and receives, independent of the wire (HTTP JSON, HTTP
// binary, gRPC). Tensors and parameters are core's types, so a tensor travels from a test or a
// load generator to the wire, and back from the wire into an InferResponse, without a conversion
// layer of its own. Plain value types; no behaviour.

#include <cstdint>
#include <string>
#include <vector>

#include "core/data_type.h"
#include "core/infer_request.h"
#include "core/parameters.h"
#include "core/shape.h"

namespace brigade::client {

// One inference request as the client sends it.
//
// How tensors travel:
//   HTTP: inputs as JSON `data` arrays, or with Triton's binary extension when `binary_inputs`
//         (each input then carries `binary_data_size` and its bytes follow the JSON header).
//         Outputs come back as JSON unless `binary_outputs` (request-wide `binary_data_output`)
//         or the output's own RequestedOutput::binary asks for binary data.
//   gRPC: inputs always as raw_input_contents; the binary flags do not apply.
struct InferSpec {
  std::string model_name;
  // Empty: the version the server's policy chooses.
  std::string model_version;
  // Echoed by the server; empty sends none.
  std::string id;
  Parameters parameters;
  std::vector<InferInput> inputs;
  // Empty: every output of the model.
  std::vector<RequestedOutput> outputs;
  bool binary_inputs = false;
  bool binary_outputs = false;
};

struct TensorMetadata {
  std::string name;
  DataType dtype = DataType::kInvalid;
  // As the server reports it: -1 marks a variable dimension (the batch dimension included).
  Shape shape;
  // The datatype text as received, kept when it names no type Brigade knows.
  std::string datatype;
};

struct ModelMetadata {
  std::string name;
  std::vector<std::string> versions;
  std::string platform;
  std::vector<TensorMetadata> inputs;
  std::vector<TensorMetadata> outputs;
};

struct ServerMetadata {
  std::string name;
  std::string version;
  std::vector<std::string> extensions;
};

// A cumulative count and the total time it took (statistics extension).
struct StatDuration {
  uint64_t count = 0;
  uint64_t ns = 0;
};

// Triton's `inference_stats`: see the statistics extension for each field's meaning.
struct InferStatistics {
  StatDuration success, fail, queue, compute_input, compute_infer, compute_output, cache_hit,
      cache_miss;
};

struct BatchStatistics {
  uint64_t batch_size = 0;
  StatDuration compute_input, compute_infer, compute_output;
};

struct ModelStatistics {
  std::string name;
  std::string version;
  uint64_t last_inference_ms = 0;
  uint64_t inference_count = 0;
  uint64_t execution_count = 0;
  InferStatistics inference_stats;
  std::vector<BatchStatistics> batch_stats;
};

// One row of the repository index.
struct RepositoryModel {
  std::string name;
  std::string version;  // empty when the server reports none
  std::string state;    // "READY", "UNAVAILABLE", ...
  std::string reason;
};

}  // namespace brigade::client

#endif  // BRIGADE_TOOLS_CLIENT_CLIENT_TYPES_H_
