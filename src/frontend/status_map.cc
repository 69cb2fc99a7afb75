#include "frontend/status_map.h"

namespace brigade::frontend {

ProtocolStatus MapStatus(absl::StatusCode code) {
  // gRPC status codes share absl's numbering (both are google.rpc.Code), so the gRPC column is the
  // code itself; the HTTP column is where protocols disagree.
  const int grpc = static_cast<int>(code);
  switch (code) {
    case absl::StatusCode::kOk:
      return {200, grpc, "OK"};
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kCancelled:
    case absl::StatusCode::kUnknown:
      return {400, grpc, "Bad Request"};
    case absl::StatusCode::kNotFound:
      return {404, grpc, "Not Found"};
    case absl::StatusCode::kUnavailable:
      return {503, grpc, "Service Unavailable"};
    case absl::StatusCode::kUnimplemented:
      return {501, grpc, "Not Implemented"};
    // Brigade: a body or tensor over the configured limit (Triton answers 400).
    case absl::StatusCode::kResourceExhausted:
      return {413, grpc, "Payload Too Large"};
    // Brigade: a request whose deadline passed before it could run (Triton answers 400/503).
    case absl::StatusCode::kDeadlineExceeded:
      return {504, grpc, "Gateway Timeout"};
    case absl::StatusCode::kPermissionDenied:
      return {403, grpc, "Forbidden"};
    case absl::StatusCode::kUnauthenticated:
      return {401, grpc, "Unauthorized"};
    case absl::StatusCode::kAborted:
      return {409, grpc, "Conflict"};
    case absl::StatusCode::kInternal:
    case absl::StatusCode::kDataLoss:
    default:
      return {500, static_cast<int>(absl::StatusCode::kInternal), "Internal Server Error"};
  }
}

}  // namespace brigade::frontend
