#ifndef BRIGADE_TOOLS_CLIENT_CLIENT_TYPES_H_
#define BRIGADE_TOOLS_CLIENT_CLIENT_TYPES_H_

// What a KServe v2 client sends, independent of the wire (HTTP JSON, HTTP binary, gRPC). Tensors
// and parameters are core's types, so a tensor travels from a test or a load generator to the
// wire, and back from the wire into an InferResponse, without a conversion layer of its own; the
// results it receives (metadata, statistics, the repository index) are protocol/'s types, the
// same the server encodes. Plain value types; no behaviour.

#include <cstdint>
#include <string>
#include <vector>

#include "core/data_type.h"
#include "core/infer_request.h"
#include "core/parameters.h"
#include "core/shape.h"
#include "protocol/metadata.h"
#include "protocol/repository_index.h"
#include "protocol/statistics.h"

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

}  // namespace brigade::client

#endif  // BRIGADE_TOOLS_CLIENT_CLIENT_TYPES_H_
