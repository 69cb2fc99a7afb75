#ifndef BRIGADE_TOOLS_CLIENT_HTTP_INFER_CODEC_H_
#define BRIGADE_TOOLS_CLIENT_HTTP_INFER_CODEC_H_

// The client side of the KServe v2 HTTP inference body, with Triton's binary tensor extension:
// InferSpec → request JSON (+ binary parts), and response bytes → InferResponse. Pure functions
// over caller-owned buffers, so the HTTP client reuses the same strings for every request.
//
// Request: {"id", "parameters", "inputs": [{"name","shape","datatype","parameters","data"}],
// "outputs": [{"name","parameters"}]}. With binary inputs each input carries
// `binary_data_size` instead of `data` and its bytes follow the JSON, in input order (the caller
// sends `Inference-Header-Content-Length: <json size>`). Binary outputs are requested with
// `binary_data_output` (request) or `binary_data` (per output).
//
// Response: JSON `data` arrays (flat or nested) are copied into new tensors; outputs with
// `binary_data_size` become views into the bytes after the JSON header (no copy), owned by
// `owner`.
//
// Failure: INVALID_ARGUMENT when a request cannot be written (FP16/BF16 or non-UTF-8 BYTES as
// JSON, a tensor whose byte size disagrees with its shape), naming the input; INTERNAL when a
// response is malformed, naming the field.

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "tools/client/client_types.h"
#include "core/infer_response.h"

namespace simdjson::dom {
class parser;
}

namespace brigade::client {

// Readable bytes a JSON text handed to the decoders below must have after its end (simdjson
// reads ahead); ReceiveBuffer provides them.
inline constexpr size_t kJsonPaddingBytes = 64;

// Appends a path segment, percent-encoding every byte outside RFC 3986's unreserved set.
void AppendPercentEncoded(std::string_view segment, std::string* out);

// Appends "/v2/models/<model>[/versions/<version>]<suffix>" with the names percent-encoded.
void AppendModelPath(std::string_view model, std::string_view version, std::string_view suffix,
                     std::string* out);

// Writes the request JSON into `json` (cleared first) and, for binary inputs, the spans of input
// bytes to send after it into `binary_parts` (cleared first; they borrow `request`'s tensors).
absl::Status EncodeInferRequest(const InferSpec& request, std::string* json,
                                std::vector<std::span<const std::byte>>* binary_parts);

// Decodes a 200 answer to an infer request. `json` must be followed by kJsonPaddingBytes readable
// bytes; `binary` holds the bytes after the JSON header (empty without the binary extension) and
// must stay alive as long as `owner` does.
absl::Status DecodeInferResponse(simdjson::dom::parser& parser, std::string_view json,
                                 std::span<std::byte> binary, std::shared_ptr<const void> owner,
                                 InferResponse* response);

}  // namespace brigade::client

#endif  // BRIGADE_TOOLS_CLIENT_HTTP_INFER_CODEC_H_
