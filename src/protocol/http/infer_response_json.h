#ifndef BRIGADE_PROTOCOL_HTTP_INFER_RESPONSE_JSON_H_
#define BRIGADE_PROTOCOL_HTTP_INFER_RESPONSE_JSON_H_

// The body of a KServe v2 infer response (JSON, with Triton's binary tensor extension), in both
// directions: the server's EncodeInferResponse (InferResponse → body) and the client's
// DecodeInferResponse (body → InferResponse).
//
// Encoding: outputs go in the order the response holds them (the server has already applied the
// request's output selection). An output is sent as binary data when the request asked for it with
// `binary_data: true`, or when it was not named explicitly and the request set
// `binary_data_output: true`; otherwise as a flat JSON `data` array. Binary outputs carry a
// `binary_data_size` parameter, and their bytes follow the JSON header in output order; the
// caller then sends `Inference-Header-Content-Length: <json.size()>` and the parts after the JSON.
// Binary parts borrow the response's tensors, so the response must outlive the write. An output
// the request placed in shared memory (OutputEncoding's `shared_memory`) is sent with its name,
// datatype, shape and parameters and no data: its bytes are in the client's region.
//
// Encoding fails with INVALID_ARGUMENT when an output cannot be written as JSON (a BYTES element
// that is not UTF-8), naming the output.
//
// Decoding: JSON `data` arrays (flat or nested) are copied into new tensors; outputs with
// `binary_data_size` become views into the bytes after the JSON header (no copy), owned by
// `owner`, where their first byte is aligned to their element size. The binary tensors are packed
// back to back after a header of any length, so one may start at any address: such an output is
// copied into an owned (aligned) tensor instead, since typed access to it would be undefined.
// Unknown fields are ignored, so newer servers stay readable. A malformed response is INTERNAL (the
// server's fault, not the caller's), naming the field.
//
// Pure functions; thread-compatible.

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/infer_request.h"
#include "core/infer_response.h"
#include "core/parameters.h"
#include "protocol/http/json_writer.h"
#include "protocol/shared_memory.h"

namespace simdjson::dom {
class parser;
}

namespace brigade::protocol::http {

// How the client asked outputs to be encoded; captured from the request before the request is
// handed to the server (the response does not carry it).
class OutputEncoding {
 public:
  OutputEncoding() = default;
  // `shared_memory`: the outputs written into shared-memory regions (sent without data).
  static OutputEncoding FromRequest(const InferRequest& request,
                                    std::span<const SharedMemoryOutput> shared_memory = {});

  bool IsBinary(std::string_view output_name) const;
  bool InSharedMemory(std::string_view output_name) const;

  // Whether non-finite numbers in JSON `data` are written as strings (JsonWriter's
  // set_non_finite_as_strings) rather than Triton's bare NaN / Infinity.
  bool non_finite_as_strings() const { return non_finite_as_strings_; }
  void set_non_finite_as_strings(bool strings) { non_finite_as_strings_ = strings; }

 private:
  bool all_binary_ = false;
  bool non_finite_as_strings_ = false;
  // Outputs the request named, with their resolved binary flag.
  std::vector<std::pair<std::string, bool>> named_;
  std::vector<std::string> shared_memory_;
};

struct EncodedInferResponse {
  // The whole body when `binary` is false; otherwise the JSON header.
  std::string json;
  bool binary = false;
  // Raw bytes of the binary outputs, in order, to be sent right after `json`.
  std::vector<std::span<const std::byte>> binary_parts;
};

absl::StatusOr<EncodedInferResponse> EncodeInferResponse(const InferResponse& response,
                                                         const OutputEncoding& encoding);

// Decodes a 200 answer to an infer request. `json` must be followed by kJsonPaddingBytes
// (json_dom_reader.h) readable bytes; `binary` holds the bytes after the JSON header (empty
// without the binary extension) and must stay alive as long as `owner` does.
absl::Status DecodeInferResponse(simdjson::dom::parser& parser, std::string_view json,
                                 std::span<std::byte> binary, std::shared_ptr<const void> owner,
                                 InferResponse* response);

}  // namespace brigade::protocol::http

#endif  // BRIGADE_PROTOCOL_HTTP_INFER_RESPONSE_JSON_H_
