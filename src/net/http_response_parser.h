#ifndef BRIGADE_NET_HTTP_RESPONSE_PARSER_H_
#define BRIGADE_NET_HTTP_RESPONSE_PARSER_H_

// HTTP/1.1 response framing for net::HttpConnection, as pure functions over received bytes: the
// status line and the few headers its users act on, any header on request, and in-place decoding
// of a chunked body.
//
// Understood headers (names case-insensitive): Content-Length, Transfer-Encoding (chunked),
// Connection (close / keep-alive), Inference-Header-Content-Length (Triton's binary extension),
// Retry-After (delay-seconds, for the OTLP exporter's backoff). Others are skipped by the head
// parser and reachable through ForEachHttpHeader. HTTP/1.0 responses close the connection unless
// they say keep-alive.
//
// Failure: INTERNAL naming what is malformed (the server spoke something other than HTTP/1.x);
// the connection is then unusable. Thread-safe (no state).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"

namespace brigade::net {

struct HttpResponseHead {
  int status = 0;
  // Bytes of the status line and headers, including the blank line.
  size_t head_bytes = 0;
  std::optional<size_t> content_length;
  bool chunked = false;
  // The server closes the connection after this response.
  bool close = false;
  std::optional<size_t> inference_header_length;
  // Retry-After as delay-seconds; empty when absent or in the HTTP-date form.
  std::optional<int64_t> retry_after_seconds;
};

// Parses the head at the start of `bytes`. Returns false when the blank line ending the head has
// not arrived yet (call again with more bytes), true with `head` filled otherwise. Heads longer
// than `max_head_bytes` are refused.
absl::StatusOr<bool> ParseHttpResponseHead(std::string_view bytes, HttpResponseHead* head,
                                           size_t max_head_bytes = size_t{64} * 1024);

// Calls `visit(name, value)` for each header line of `head` (the bytes ParseHttpResponseHead
// accepted, status line first), in order, with the value's surrounding whitespace trimmed.
void ForEachHttpHeader(std::string_view head,
                       absl::FunctionRef<void(std::string_view, std::string_view)> visit);

// True when a response with this status has no body whatever its headers say (1xx, 204, 304).
bool StatusHasNoBody(int status);

struct ChunkedBody {
  // Decoded body bytes, now at the start of the buffer.
  size_t body_bytes = 0;
  // Raw bytes the chunked encoding (with its trailers) occupied.
  size_t consumed_bytes = 0;
};

// Decodes a chunked body in place: `data` holds the raw bytes received after the head. Returns
// nullopt while the final chunk and trailers are incomplete; the buffer is untouched until then.
absl::StatusOr<std::optional<ChunkedBody>> DecodeChunkedInPlace(char* data, size_t size_bytes);

}  // namespace brigade::net

#endif  // BRIGADE_NET_HTTP_RESPONSE_PARSER_H_
