#ifndef BRIGADE_PROTOCOL_HTTP_INFER_REQUEST_JSON_H_
#define BRIGADE_PROTOCOL_HTTP_INFER_REQUEST_JSON_H_

// The body of `POST /v2/models/{m}[/versions/{v}]/infer`, KServe v2 JSON with Triton's binary
// tensor extension, in both directions: the server's DecodeInferRequest (body → InferRequest)
// and the client's EncodeInferRequest (InferSpec → body). One file pair, so the two halves of the
// format are read side by side.
//
// DecodeInferRequest accepts the KServe v2 JSON request and Triton's binary tensor extension:
//   * Without `Inference-Header-Content-Length` the whole body is JSON.
//   * With it, the first N bytes are the JSON header and the rest holds, back to back and in the
//     order the inputs appear, the raw bytes of every input that carries a `binary_data_size`
//     parameter (little-endian, row-major; BYTES as 4-byte little-endian length + bytes per
//     element). Those inputs borrow the body buffer (Tensor::View, the buffer as owner): no copy.
//     The exception is an input whose bytes are not aligned to its element size (typed access
//     there would be undefined): it is copied. The HTTP transport places the body so the binary
//     section starts 64-byte aligned (the front end's KServeHttpHandler::AlignedBodyOffset), so
//     with the usual element types every input after it is aligned as well.
//   * N = 0 is Triton's "raw binary request": no JSON, the whole body is the one input of the
//     model (HttpInferInput::raw_input, which the front end looks up), batch 1, every output
//     binary. A BYTES input takes the body as its one element (no length prefix), so
//     `curl --data-binary @photo.jpg` feeds an image pipeline; another type takes the body as
//     its raw little-endian elements, the shape deduced from the byte size: every -1 becomes
//     1 except the last, which takes what the size leaves (it must divide evenly). Without a
//     raw_input (the model has several inputs) the request is refused.
//
// Reserved parameters are resolved into typed fields and removed from the parameter maps:
//   request `binary_data_output` (bool)  → InferRequest::all_outputs_binary and the default of
//                                          every requested output's `binary`
//   request `priority` (uint32)          → InferRequest::priority
//   request `timeout` (µs, >= 0)         → InferRequest::deadline, from `arrival_ns`
//   input   `binary_data_size` (int64)   → where the input's bytes are in the binary section
//   input   `shared_memory_*`            → the input's bytes in a registered region (a view into
//                                          it, no copy: protocol/shared_memory.h)
//   output  `binary_data` (bool)         → RequestedOutput::binary
// Other parameters (bool, integer, double, string) are kept as sent.
//
// Strictness: unknown fields, duplicate fields and duplicate input/output names are errors, so a
// misspelt field never silently does nothing. Every error is INVALID_ARGUMENT whose message names
// the field at fault (RESOURCE_EXHAUSTED for tensors over the size limit).
//
// EncodeInferRequest writes {"id", "parameters", "inputs": [{"name","shape","datatype",
// "parameters","data"}], "outputs": [{"name","parameters"}]}. With binary inputs each input
// carries `binary_data_size` instead of `data` and its bytes follow the JSON, in input order (the
// caller sends `Inference-Header-Content-Length: <json size>`). Binary outputs are requested with
// `binary_data_output` (request) or `binary_data` (per output). An input whose parameters name a
// `shared_memory_region` goes with its name, shape, datatype and parameters only (its tensor gives
// the shape and type; its bytes are in the region). It fails with INVALID_ARGUMENT,
// naming the input, when a request cannot be written (FP16/BF16 or non-UTF-8 BYTES as JSON, an
// input without a tensor).
//
// Pure functions: no I/O, no clock; thread-compatible (the decoder uses a thread-local JSON
// parser).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/infer_request.h"
#include "protocol/http/body_buffer.h"
#include "protocol/infer_spec.h"
#include "protocol/metadata.h"
#include "protocol/shared_memory.h"

namespace brigade::protocol::http {

// The name of Triton's binary extension header (HTTP header names are case-insensitive).
inline constexpr std::string_view kInferenceHeaderContentLength = "Inference-Header-Content-Length";

struct HttpInferInput {
  // From the URL. `model_version` "" means "let the server's version policy choose".
  std::string_view model_name;
  std::string_view model_version;
  // The Inference-Header-Content-Length header's value, when the request has one.
  std::optional<std::string_view> header_length;
  // The request body; shared with the tensors that borrow it.
  std::shared_ptr<BodyBuffer> body;
  // t0 of the request (Clock::NowNs scale): the origin of the `timeout` parameter.
  int64_t arrival_ns = 0;
  // For a raw binary request (header length 0): the model's only input, from its metadata;
  // null when the model has more than one input or the front end did not look it up.
  const protocol::TensorMetadata* raw_input = nullptr;
  // Where inputs naming a shared-memory region find their bytes (protocol/shared_memory.h);
  // null: system shared memory is off, and such an input is refused. Borrowed for the call.
  const SharedMemoryResolver* shared_memory = nullptr;
};

absl::StatusOr<std::unique_ptr<InferRequest>> DecodeInferRequest(const HttpInferInput& input);

// Writes the request JSON into `json` (cleared first) and, for binary inputs, the spans of input
// bytes to send after it into `binary_parts` (cleared first; they borrow `request`'s tensors).
// Reusing the same strings for every request keeps their allocations.
absl::Status EncodeInferRequest(const InferSpec& request, std::string* json,
                                std::vector<std::span<const std::byte>>* binary_parts);

}  // namespace brigade::protocol::http

#endif  // BRIGADE_PROTOCOL_HTTP_INFER_REQUEST_JSON_H_
