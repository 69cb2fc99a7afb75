#ifndef BRIGADE_FRONTEND_STATUS_MAP_H_
#define BRIGADE_FRONTEND_STATUS_MAP_H_

// The one table that turns an absl::Status code into what each protocol's client sees.
// Follows Triton's mapping where Triton has one, so existing clients branch
// on the same statuses; additions are marked in status_map.cc.

#include <string_view>

#include "absl/status/status.h"

namespace brigade::frontend {

struct ProtocolStatus {
  int http_status;          // e.g. 400
  int grpc_code;            // grpc::StatusCode value, e.g. 3 (INVALID_ARGUMENT)
  std::string_view reason;  // HTTP reason phrase, e.g. "Bad Request"
};

ProtocolStatus MapStatus(absl::StatusCode code);

inline int HttpStatusFor(const absl::Status& status) {
  return MapStatus(status.code()).http_status;
}
inline int GrpcCodeFor(const absl::Status& status) { return MapStatus(status.code()).grpc_code; }

}  // namespace brigade::frontend

#endif  // BRIGADE_FRONTEND_STATUS_MAP_H_
