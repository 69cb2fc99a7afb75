#ifndef BRIGADE_FRONTEND_HTTP_INFER_RESPONSE_ENCODER_H_
#define BRIGADE_FRONTEND_HTTP_INFER_RESPONSE_ENCODER_H_

// EncodeInferResponse: InferResponse → the body of a KServe v2 infer response.
//
// Outputs go in the order the response holds them (the server has already applied the request's
// output selection). An output is sent as binary data when the request asked for it with
// `binary_data: true`, or when it was not named explicitly and the request set
// `binary_data_output: true`; otherwise as a flat JSON `data` array. Binary outputs carry a
// `binary_data_size` parameter, and their bytes follow the JSON header in output order; the
// caller then sends `Inference-Header-Content-Length: <json.size()>` and the parts after the JSON.
// Binary parts borrow the response's tensors, so the response must outlive the write.
//
// Failure: INVALID_ARGUMENT when an output cannot be written as JSON (a BYTES element that is not
// UTF-8), naming the output. Pure function; thread-compatible.

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/infer_request.h"
#include "core/infer_response.h"
#include "core/parameters.h"
#include "frontend/http/json_writer.h"

namespace brigade::frontend {

// How the client asked outputs to be encoded; captured from the request before the request is
// handed to the server (the response does not carry it).
class OutputEncoding {
 public:
  OutputEncoding() = default;
  static OutputEncoding FromRequest(const InferRequest& request);

  bool IsBinary(std::string_view output_name) const;

 private:
  bool all_binary_ = false;
  // Outputs the request named, with their resolved binary flag.
  std::vector<std::pair<std::string, bool>> named_;
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

// Writes `parameters` as a JSON object (shared by every encoder that emits parameters).
void WriteParameters(const Parameters& parameters, JsonWriter* writer);

}  // namespace brigade::frontend

#endif  // BRIGADE_FRONTEND_HTTP_INFER_RESPONSE_ENCODER_H_
