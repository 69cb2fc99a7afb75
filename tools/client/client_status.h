#ifndef BRIGADE_TOOLS_CLIENT_CLIENT_STATUS_H_
#define BRIGADE_TOOLS_CLIENT_CLIENT_STATUS_H_

// How the client reports a server's refusal: an absl::Status whose code is the closest absl code
// to what the server said, whose message is the server's own `error` text, and which carries the
// protocol's status verbatim as a payload, so a caller can branch on "HTTP 503" or "gRPC 14"
// exactly as the server sent it.
//
// HTTP statuses map to codes in the inverse of serve/status_map (Triton's table): 400 →
// INVALID_ARGUMENT, 404 → NOT_FOUND, 503 → UNAVAILABLE, 413 → RESOURCE_EXHAUSTED, ...; gRPC codes
// share absl's numbering and map one to one.
//
// Failures of the client itself (connect refused, timeouts, malformed responses) carry no
// payload: UNAVAILABLE for connection problems, DEADLINE_EXCEEDED for timeouts, INTERNAL for a
// response the client cannot parse. Pure functions; thread-safe.

#include <optional>
#include <string_view>

#include "absl/status/status.h"

namespace brigade::client {

// Payload keys (values are decimal text).
inline constexpr std::string_view kHttpStatusPayload = "brigade/http-status";
inline constexpr std::string_view kGrpcCodePayload = "brigade/grpc-code";

// The absl code for an HTTP error status.
absl::StatusCode CodeForHttpStatus(int http_status);

// A status for a non-2xx HTTP answer: `message` is the server's error text.
absl::Status HttpError(int http_status, std::string_view message);

// A status for a non-OK gRPC answer.
absl::Status GrpcError(int grpc_code, std::string_view message);

// The HTTP status / gRPC code a server answered with, when `status` came from one.
std::optional<int> HttpStatusOf(const absl::Status& status);
std::optional<int> GrpcCodeOf(const absl::Status& status);

}  // namespace brigade::client

#endif  // BRIGADE_TOOLS_CLIENT_CLIENT_STATUS_H_
