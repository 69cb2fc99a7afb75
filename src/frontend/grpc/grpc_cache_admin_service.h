#ifndef BRIGADE_FRONTEND_GRPC_GRPC_CACHE_ADMIN_SERVICE_H_
#define BRIGADE_FRONTEND_GRPC_GRPC_CACHE_ADMIN_SERVICE_H_

// GrpcCacheAdminService: `brigade.admin.CacheAdmin` (cache_admin.proto), the response cache's
// invalidation API, on gRPC's callback API.
//
//   Invalidate(model_name, model_version)   → InferenceServer::InvalidateCache
//
// The request is decoded inline (a bad version is answered at once); the invalidation itself may
// wait for Redis (deleting keys, publishing the broadcast), so it runs on the service's own
// BlockingWorker, never on gRPC's callback threads. The worker's queue is bounded: a full queue
// answers UNAVAILABLE at once. The wait for Redis is bounded by the client's deadline and by
// Options::max_wait, whichever comes first.
//
// Thread safety: handlers run on gRPC's threads, concurrently. Ownership: `server` is borrowed
// and must outlive the grpc::Server this service is registered with; the service must outlive it
// too (GrpcServer guarantees both by shutting gRPC down first). Destroying the service runs the
// invalidations still queued.

#include <cstdint>

#include "absl/time/time.h"
#include "core/blocking_worker.h"
#include "frontend/auth/access_gate.h"
#include "protocol/cache_admin.grpc.pb.h"
#include "server/inference_server.h"

namespace brigade::frontend {

class GrpcCacheAdminService final : public brigade::admin::CacheAdmin::CallbackService {
 public:
  struct Options {
    // Invalidations waiting for the worker; more are refused with UNAVAILABLE.
    int max_queued_calls = 16;
    // Longest wait for Redis per call when the client's deadline is later or absent.
    absl::Duration max_wait = absl::Seconds(5);
    // Access control (the `admin` scope); null: open. Borrowed; must outlive the service.
    const auth::AccessGate* access_gate = nullptr;
  };

  GrpcCacheAdminService(InferenceServer* server, Options options);

  grpc::ServerUnaryReactor* Invalidate(grpc::CallbackServerContext* context,
                                       const brigade::admin::CacheInvalidateRequest* request,
                                       brigade::admin::CacheInvalidateResponse* response) override;

 private:
  InferenceServer* const server_;
  const Options options_;
  BlockingWorker worker_;
};

}  // namespace brigade::frontend

#endif  // BRIGADE_FRONTEND_GRPC_GRPC_CACHE_ADMIN_SERVICE_H_
