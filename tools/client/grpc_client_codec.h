#ifndef BRIGADE_TOOLS_CLIENT_GRPC_CLIENT_CODEC_H_
#define BRIGADE_TOOLS_CLIENT_GRPC_CLIENT_CODEC_H_

// The client side of the KServe v2 / Triton gRPC messages (protocol/grpc_service.proto):
// InferSpec → ModelInferRequest, and the response messages → the client's types. Pure functions.
//
// Requests send every input as raw_input_contents (one entry per input, in input order), which
// every KServe v2 server accepts and which costs one copy into the message. Responses may carry
// raw_output_contents (Brigade, Triton) or typed contents (other servers); raw outputs become
// views into the response message (no copy), kept alive by the shared pointer passed in.
//
// Failure: INVALID_ARGUMENT for a request that cannot be written, naming the input; INTERNAL for
// a malformed response, naming the output.

#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "tools/client/client_types.h"
#include "core/infer_response.h"
#include "protocol/grpc_service.pb.h"

namespace brigade::client {

// Fills `out`, which is cleared first; reusing one message across calls reuses its allocations.
absl::Status BuildModelInferRequest(const InferSpec& request, inference::ModelInferRequest* out);

// Decodes `message` into `response` (overwritten).
absl::Status DecodeModelInferResponse(std::shared_ptr<const inference::ModelInferResponse> message,
                                      InferResponse* response);

protocol::ServerMetadata FromProto(const inference::ServerMetadataResponse& message);
protocol::ModelMetadata FromProto(const inference::ModelMetadataResponse& message);
std::vector<protocol::ModelStatistics> FromProto(const inference::ModelStatisticsResponse& message);
std::vector<protocol::RepositoryIndexEntry> FromProto(const inference::RepositoryIndexResponse& message);

}  // namespace brigade::client

#endif  // BRIGADE_TOOLS_CLIENT_GRPC_CLIENT_CODEC_H_
