#include "frontend/grpc/grpc_status.h"

#include <limits>

#include "absl/strings/cord.h"
#include "absl/types/optional.h"
#include "frontend/status_map.h"
#include "protocol/error_payload.h"

namespace brigade::frontend {

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(GrpcCodeFor(status)),
                      std::string(status.message()));
}

grpc::Status FinishStatus(const absl::Status& status, grpc::ServerContextBase* context) {
  if (std::optional<std::string> seconds = protocol::RetryAfterSeconds(status)) {
    context->AddTrailingMetadata(kRetryAfterMetadata, *seconds);
  }
  return ToGrpcStatus(status);
}

grpc::ServerUnaryReactor* FinishUnary(grpc::CallbackServerContext* context,
                                      const absl::Status& status) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(FinishStatus(status, context));
  return reactor;
}

Deadline FromGrpcDeadline(std::chrono::system_clock::time_point grpc_deadline,
                          std::chrono::system_clock::time_point wall_now,
                          int64_t monotonic_now_ns) {
  // Without a client deadline gRPC reports the far future (gpr_inf_future, clamped by the
  // time_point conversion); anything beyond a year is "none" for our purposes.
  const auto remaining = grpc_deadline - wall_now;
  if (remaining > std::chrono::hours(24 * 365)) return Deadline::Infinite();
  const int64_t remaining_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(remaining).count();
  if (remaining_ns <= 0) return Deadline::AtNs(monotonic_now_ns);
  return Deadline::AtNs(monotonic_now_ns + remaining_ns);
}

}  // namespace brigade::frontend
