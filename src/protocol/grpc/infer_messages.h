#ifndef BRIGADE_PROTOCOL_GRPC_INFER_MESSAGES_H_
#define BRIGADE_PROTOCOL_GRPC_INFER_MESSAGES_H_

// The gRPC inference codec: pure functions between the protocol's ModelInferRequest /
// ModelInferResponse messages and Brigade's types, in both directions. The server decodes
// requests into InferRequest and encodes InferResponse; the client encodes InferSpec and decodes
// responses into InferResponse. No sockets, no gRPC runtime: the service and the client call
// these, and the unit tests and the fuzzer call them directly.
//
// The namespace is brigade::protocol::grpc: code inside brigade::protocol that means the gRPC
// library writes ::grpc.
//
// Decoding a request accepts either form of tensor data the protocol allows, never both in one
// request:
//   * typed `contents`, exactly the field that matches the input's datatype (int_contents for
//     INT8/INT16/INT32 with range checks, uint_contents for UINT8/UINT16/UINT32, bytes_contents
//     for BYTES, ...), copied into a new owned tensor;
//   * `raw_input_contents`, one entry per input in order, *borrowed* without a copy: each input
//     tensor is a Tensor::View into the message's bytes that shares ownership of the message.
//
// Lifetime rule for borrowed inputs: the decoder takes the message as a shared_ptr and every
// raw input tensor holds a reference to it, so the bytes stay valid as long as any tensor (or
// any tensor sliced from it, e.g. an output that aliases an input, or a cached response) still
// points into them, even after the RPC has finished. The transport must therefore hand the
// decoder a message it will not modify or reuse while that reference is held; the service does
// so by allocating each request message in shared ownership (see frontend/grpc/grpc_server.cc).
//
// Encoding a response always uses `raw_output_contents`, as Triton does: one copy of each
// output tensor into the message, none on the client side.
//
// The client's requests send every input as raw_input_contents (one entry per input, in input
// order), which every KServe v2 server accepts and which costs one copy into the message. The
// responses it reads may carry raw_output_contents (Brigade, Triton) or typed contents (other
// servers); raw outputs become views into the response message (no copy), kept alive by the
// shared pointer passed in.
//
// Failure: INVALID_ARGUMENT naming the field at fault (model_version, a parameter, an input by
// name and the contents field) for malformed requests, shared-memory references included;
// RESOURCE_EXHAUSTED for tensors over the size limit. On the client's side, INVALID_ARGUMENT for
// a request that cannot be written, naming the input, and INTERNAL for a malformed response,
// naming the output. Nothing here throws or aborts on input.
//
// Thread safety: stateless; safe from any thread.

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/infer_request.h"
#include "core/infer_response.h"
#include "core/parameters.h"
#include "protocol/grpc_service.pb.h"
#include "protocol/infer_spec.h"
#include "protocol/shared_memory.h"

namespace brigade::protocol::grpc {

// Request parameters the decoder turns into InferRequest fields instead of passing them on:
// `priority` (0 = the model's default level, 1 = highest) and `timeout` (µs from arrival).
inline constexpr std::string_view kPriorityParameter = "priority";
inline constexpr std::string_view kTimeoutParameter = "timeout";

// Decodes `message` into a new InferRequest stamped with t0 = `arrival_ns` (Clock::NowNs()
// scale), protocol kGrpc, no cancel flag and no callback: the caller adds those. `message` must
// not be null. See the file comment for the lifetime of raw inputs.
// Inputs naming a shared-memory region (protocol/shared_memory.h) are views into it, found
// through `shared_memory` (null: the feature is off and such inputs are refused); they have no
// raw_input_contents entry, as Triton's clients send them. Requested outputs keep their
// shared_memory_* parameters for BindSharedMemoryOutputs.
absl::StatusOr<std::unique_ptr<InferRequest>> DecodeModelInferRequest(
    std::shared_ptr<const inference::ModelInferRequest> message, int64_t arrival_ns,
    const SharedMemoryResolver* shared_memory = nullptr);

// Fills `out` (cleared first) from `response`, each output's bytes in raw_output_contents; an
// output in `shared_memory` gets an empty entry (its bytes are in the client's region).
// INTERNAL if an output tensor has no data type (a server bug, not a client error).
absl::Status EncodeModelInferResponse(const InferResponse& response,
                                      inference::ModelInferResponse* out,
                                      std::span<const SharedMemoryOutput> shared_memory = {});

// Parameter maps in both directions. A parameter with no value set is refused when a server
// decodes a request (INVALID_ARGUMENT naming `where` and the key: the client sent nothing it could
// mean), and skipped when a client decodes a response (a newer server's value type it does not
// know must not make the whole response unreadable).
enum class UnsetParameter { kRefuse, kSkip };
using InferParameterMap = google::protobuf::Map<std::string, inference::InferParameter>;
absl::Status DecodeParameters(const InferParameterMap& map, std::string_view where, Parameters* out,
                              UnsetParameter unset = UnsetParameter::kRefuse);
void EncodeParameters(const Parameters& parameters, InferParameterMap* out);

// The client's request: fills `out`, which is cleared first; reusing one message across calls
// reuses its allocations. An input whose parameters name a `shared_memory_region` gets no
// raw_input_contents entry (its bytes are in the region; its tensor gives shape and type).
absl::Status EncodeModelInferRequest(const InferSpec& request, inference::ModelInferRequest* out);

// The client's reading of a response: decodes `message` into `response` (overwritten).
absl::Status DecodeModelInferResponse(std::shared_ptr<const inference::ModelInferResponse> message,
                                      InferResponse* response);

}  // namespace brigade::protocol::grpc

#endif  // BRIGADE_PROTOCOL_GRPC_INFER_MESSAGES_H_
