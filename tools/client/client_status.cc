#include "tools/client/client_status.h"

#include <string>

#include "absl/strings/cord.h"
#include "core/strings.h"

namespace brigade::client {
namespace {

absl::string_view AbslView(std::string_view text) { return {text.data(), text.size()}; }

std::optional<int> IntPayload(const absl::Status& status, std::string_view key) {
  auto payload = status.GetPayload(AbslView(key));
  if (!payload.has_value()) return std::nullopt;
  int value = 0;
  if (!ParseInteger(std::string(*payload), &value)) return std::nullopt;
  return value;
}

}  // namespace

absl::StatusCode CodeForHttpStatus(int http_status) {
  switch (http_status) {
    case 400:
    case 405:
    case 411:
    case 415:
    case 422:
    case 431:
      return absl::StatusCode::kInvalidArgument;
    case 401:
      return absl::StatusCode::kUnauthenticated;
    case 403:
      return absl::StatusCode::kPermissionDenied;
    case 404:
      return absl::StatusCode::kNotFound;
    case 408:
    case 504:
      return absl::StatusCode::kDeadlineExceeded;
    case 409:
      return absl::StatusCode::kAborted;
    case 413:
    case 429:
      return absl::StatusCode::kResourceExhausted;
    case 501:
      return absl::StatusCode::kUnimplemented;
    case 502:
    case 503:
      return absl::StatusCode::kUnavailable;
    default:
      if (http_status >= 400 && http_status < 500) return absl::StatusCode::kInvalidArgument;
      if (http_status >= 500 && http_status < 600) return absl::StatusCode::kInternal;
      return absl::StatusCode::kUnknown;
  }
}

absl::Status HttpError(int http_status, std::string_view message) {
  absl::Status status(CodeForHttpStatus(http_status), AbslView(message));
  status.SetPayload(AbslView(kHttpStatusPayload), absl::Cord(std::to_string(http_status)));
  return status;
}

absl::Status GrpcError(int grpc_code, std::string_view message) {
  // gRPC and absl share google.rpc.Code's numbering; anything outside it is UNKNOWN.
  const absl::StatusCode code = grpc_code > 0 && grpc_code <= 16
                                    ? static_cast<absl::StatusCode>(grpc_code)
                                    : absl::StatusCode::kUnknown;
  absl::Status status(code, AbslView(message));
  status.SetPayload(AbslView(kGrpcCodePayload), absl::Cord(std::to_string(grpc_code)));
  return status;
}

std::optional<int> HttpStatusOf(const absl::Status& status) {
  return IntPayload(status, kHttpStatusPayload);
}

std::optional<int> GrpcCodeOf(const absl::Status& status) {
  return IntPayload(status, kGrpcCodePayload);
}

}  // namespace brigade::client
