#ifndef BRIGADE_FRONTEND_GRPC_GRPC_STATUS_H_
#define BRIGADE_FRONTEND_GRPC_GRPC_STATUS_H_

// absl::Status → grpc::Status for the gRPC front end, through the one mapping table in
// frontend/status_map.h, plus the trailing metadata an error carries: an UNAVAILABLE status with a
// retry-after (protocol/error_payload.h) adds `retry-after: <seconds>` so clients can back off.
// Also the translation of a gRPC deadline (wall clock) into a monotonic Deadline.
// Stateless; safe from any thread.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "core/deadline.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/server_callback.h"
#include "grpcpp/support/status.h"

namespace brigade::frontend {

// Trailing metadata key for the retry hint (lower case, as HTTP/2 requires).
inline constexpr char kRetryAfterMetadata[] = "retry-after";

// The grpc::Status clients see for `status` (code from the mapping table, message verbatim).
grpc::Status ToGrpcStatus(const absl::Status& status);

// ToGrpcStatus, and the retry hint added to `context`'s trailing metadata. Call before Finish().
grpc::Status FinishStatus(const absl::Status& status, grpc::ServerContextBase* context);

// Finishes a unary call that needs no reactor of its own with `status` (FinishStatus) on gRPC's
// default reactor, and returns that reactor for the RPC method to hand back.
grpc::ServerUnaryReactor* FinishUnary(grpc::CallbackServerContext* context,
                                      const absl::Status& status);

// The monotonic deadline (Clock::NowNs() scale) matching a gRPC deadline, given the wall-clock
// and monotonic readings of "now". Infinite when the client set no deadline.
Deadline FromGrpcDeadline(std::chrono::system_clock::time_point grpc_deadline,
                          std::chrono::system_clock::time_point wall_now, int64_t monotonic_now_ns);

}  // namespace brigade::frontend

#endif  // BRIGADE_FRONTEND_GRPC_GRPC_STATUS_H_
