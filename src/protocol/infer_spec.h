#ifndef BRIGADE_PROTOCOL_INFER_SPEC_H_
#define BRIGADE_PROTOCOL_INFER_SPEC_H_

// InferSpec: one KServe v2 inference request as a client sends it, independent of the wire
// (HTTP JSON, HTTP binary, gRPC). It lives here, beside the result types, because the request
// encoders (protocol/http/infer_request_json.h, protocol/grpc/infer_messages.h) read it; the
// client (tools/client) builds it. Tensors and parameters are core's types, so a tensor travels
// from a test or a load generator to the wire without a conversion layer of its own.
//
// How tensors travel:
//   HTTP: inputs as JSON `data` arrays, or with Triton's binary extension when `binary_inputs`
//         (each input then carries `binary_data_size` and its bytes follow the JSON header).
//         Outputs come back as JSON unless `binary_outputs` (request-wide `binary_data_output`)
//         or the output's own RequestedOutput::binary asks for binary data.
//   gRPC: inputs always as raw_input_contents; the binary flags do not apply.
//   Either: an input whose parameters name a `shared_memory_region` (with its offset and byte
//         size, protocol/shared_memory.h) sends no bytes at all; its tensor still gives the shape
//         and datatype (a client writing into its region can make it a view of those bytes).
//
// A plain value type; no behaviour. Input tensors are shared (Tensor), not copied, when the spec
// is copied.

#include <string>
#include <vector>

#include "core/infer_request.h"
#include "core/parameters.h"

namespace brigade::protocol {

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

}  // namespace brigade::protocol

#endif  // BRIGADE_PROTOCOL_INFER_SPEC_H_
