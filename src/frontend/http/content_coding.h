#ifndef BRIGADE_FRONTEND_HTTP_CONTENT_CODING_H_
#define BRIGADE_FRONTEND_HTTP_CONTENT_CODING_H_

// HTTP content codings (RFC 9110 §8.4) for request and response bodies: gzip and deflate, as
// Triton accepts them (its clients' request_compression_algorithm /
// response_compression_algorithm).
//
// Pure functions over bytes, no sockets: the handler inflates a request body named by its
// Content-Encoding before decoding it, and deflates a response when the client's Accept-Encoding
// asks for it. The binary-tensor extension's Inference-Header-Content-Length always counts the
// uncompressed body, on both sides.
//
// Failure: a body that is not valid data of its coding (corrupt, truncated, trailing bytes after
// the stream) is InvalidArgument; one that inflates past `max_bytes` is ResourceExhausted (413 at
// the edge), found while inflating, so a small "zip bomb" never grows past the limit in memory.
// Thread safety: stateless, callable from any thread.

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "core/memory_budget.h"
#include "protocol/http/body_buffer.h"

namespace brigade::frontend {

enum class ContentCoding { kIdentity, kGzip, kDeflate };

// "identity", "gzip", "deflate": the token for Content-Encoding headers.
std::string_view ContentCodingName(ContentCoding coding);

// A request's Content-Encoding value: identity, gzip (or its alias x-gzip) or deflate, in any
// case, surrounded by optional whitespace. nullopt for anything else, including a list of several
// codings (the caller answers 415 naming the value).
std::optional<ContentCoding> ParseContentEncoding(std::string_view value);

// The coding to answer in, from the request's Accept-Encoding (RFC 9110 §12.5.3): the acceptable
// coding (q > 0, `*` standing for codings not listed) of highest q among gzip and deflate, gzip on
// a tie; identity when the header is absent or accepts neither.
ContentCoding NegotiateResponseCoding(std::optional<std::string_view> accept_encoding);

// Inflates `compressed` (gzip: one or more members; deflate: a zlib stream, or raw deflate as
// some clients send) into a BodyBuffer whose byte `aligned_offset` is BodyBuffer::kAlignment
// aligned (where the binary tensors start), charged to `budget` as it grows (null: none; past it:
// UNAVAILABLE). kIdentity is not a coding to inflate (InvalidArgument).
absl::StatusOr<std::shared_ptr<protocol::http::BodyBuffer>> InflateBody(
    ContentCoding coding, std::span<const std::byte> compressed, size_t max_bytes,
    size_t aligned_offset, MemoryBudget* budget = nullptr);

// `pieces`, concatenated, compressed with `coding` (gzip or deflate) at zlib's fastest level: a
// response is compressed only because the client asked, and latency beats ratio here. kIdentity
// returns the concatenation.
std::string DeflateBody(ContentCoding coding, std::span<const std::span<const std::byte>> pieces);

}  // namespace brigade::frontend

#endif  // BRIGADE_FRONTEND_HTTP_CONTENT_CODING_H_
