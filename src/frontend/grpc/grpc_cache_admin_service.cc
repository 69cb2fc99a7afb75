#include "frontend/grpc/grpc_cache_admin_service.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>

#include "absl/time/time.h"
#include "frontend/grpc/grpc_access.h"
#include "frontend/grpc/grpc_status.h"
#include "protocol/grpc/infer_messages.h"
#include "protocol/model_version.h"

namespace brigade::frontend {
namespace {

// How long a call may wait for Redis: until the client's deadline, at most `cap`.
absl::Duration WaitBudget(const grpc::CallbackServerContext& context, absl::Duration cap) {
  const auto deadline = context.deadline();
  if (deadline == std::chrono::system_clock::time_point::max()) return cap;
  const absl::Duration left = absl::FromChrono(deadline - std::chrono::system_clock::now());
  return std::clamp(left, absl::ZeroDuration(), cap);
}

}  // namespace

GrpcCacheAdminService::GrpcCacheAdminService(InferenceServer* server, Options options)
    : server_(server), options_(options), worker_(options.max_queued_calls) {}

grpc::ServerUnaryReactor* GrpcCacheAdminService::Invalidate(
    grpc::CallbackServerContext* context, const brigade::admin::CacheInvalidateRequest* request,
    brigade::admin::CacheInvalidateResponse* /*response*/) {
  if (std::optional<grpc::Status> refused =
          RefuseGrpc(options_.access_gate, *context, auth::Operation::kCacheInvalidate)) {
    return FinishRefused(context, *refused);
  }
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::StatusOr<int64_t> version =
      protocol::ParseModelVersion(request->model_version(), "model_version");
  if (!version.ok()) {
    reactor->Finish(FinishStatus(version.status(), context));
    return reactor;
  }
  // The call stays open until the task finishes it; gRPC's shutdown waits for that.
  const bool posted = worker_.Post(
      [this, context, reactor, name = request->model_name(), version = *version]() mutable {
        const absl::Status status =
            server_->InvalidateCache(name, version, WaitBudget(*context, options_.max_wait));
        reactor->Finish(FinishStatus(status, context));
      });
  if (!posted) {
    reactor->Finish(FinishStatus(
        absl::UnavailableError("too many cache invalidations are waiting; retry later"), context));
  }
  return reactor;
}

}  // namespace brigade::frontend
