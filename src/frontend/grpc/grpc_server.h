#ifndef BRIGADE_FRONTEND_GRPC_GRPC_SERVER_H_
#define BRIGADE_FRONTEND_GRPC_GRPC_SERVER_H_

// GrpcServer: Brigade's gRPC front end. Listens on one address (HTTP/2 cleartext, like Triton's
// default, or TLS with `credentials`: grpc_tls_credentials.h), serves
// `inference.GRPCInferenceService` (grpc_inference_service.h), Brigade's `brigade.admin.CacheAdmin`
// (grpc_cache_admin_service.h) and the standard `grpc.health.v1.Health` service, and shuts down
// gracefully.
//
// Health: the health service reports SERVING exactly when InferenceServer::IsReady(), for the
// whole server ("") and for "inference.GRPCInferenceService". A background thread re-reads
// readiness every `health_poll`; RefreshHealth() does it at once (e.g. right after
// StartDrain()). Shutdown() turns it NOT_SERVING before it stops accepting calls.
//
// Limits: messages larger than max_receive_message_bytes / max_send_message_bytes are refused
// by gRPC with RESOURCE_EXHAUSTED (default 64 MiB, Triton's default input limit). A connection
// carries at most max_concurrent_streams calls at once (HTTP/2's setting: clients queue the
// rest), and a call's metadata over max_metadata_bytes is refused. grpc++ 1.51 offers no bound
// on the number of connections (the HTTP front end's max_connections has no gRPC twin).
//
// Lifetime and ownership: `server` is borrowed and must outlive the GrpcServer. Shutdown()
// stops accepting, lets RPCs in flight finish until the deadline, then cancels the rest (an
// inference call cancelled this way sets its request's CancelFlag and is answered CANCELLED
// without waiting for the server) and returns once gRPC is done with every call. The
// destructor calls Shutdown(absl::ZeroDuration()) if it has not been called.
//
// Thread safety: every method may be called from any thread; Shutdown() is idempotent.
// Failure: Create() returns INVALID_ARGUMENT for bad options and UNAVAILABLE when the address
// cannot be bound.

#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "frontend/grpc/grpc_async_infer.h"
#include "frontend/grpc/grpc_cache_admin_service.h"
#include "frontend/grpc/grpc_inference_service.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "server/inference_server.h"

namespace brigade::frontend {

// Triton's default maximum input size, used for both directions.
inline constexpr int64_t kDefaultGrpcMaxMessageBytes = int64_t{64} << 20;

class GrpcServer {
 public:
  struct Options {
    // Host to listen on: "0.0.0.0", "127.0.0.1", "::" or a name.
    std::string host = "0.0.0.0";
    // 0 picks a free port; port() reports the one bound. Triton's default is 8001.
    int port = 8001;
    int64_t max_receive_message_bytes = kDefaultGrpcMaxMessageBytes;
    int64_t max_send_message_bytes = kDefaultGrpcMaxMessageBytes;
    // Calls open at once on one connection; an HTTP/2 client queues its calls beyond it.
    int max_concurrent_streams = 1024;
    // Largest metadata (headers) of one call, the HTTP front end's head limit.
    int max_metadata_bytes = 16 * 1024;
    // How often the health service re-reads readiness; zero = only on RefreshHealth().
    absl::Duration health_poll = absl::Seconds(1);
    // HTTP/2 keepalive, with Triton's defaults (ping every 2 h, 20 s to answer, no pings on
    // idle connections).
    // gRPC takes them in whole milliseconds (sub-millisecond parts are dropped).
    absl::Duration keepalive_time = absl::Hours(2);
    absl::Duration keepalive_timeout = absl::Seconds(20);
    bool keepalive_permit_without_calls = false;
    // Threads that serve ModelInfer when `service.infer_api` is kCompletionQueue (one queue and
    // poller each) or kSync (gRPC's pollers; a call in flight past them gets a thread of its own);
    // unused on the callback API, whose threads are gRPC's. The serve command's default is the
    // number of CPUs it may use.
    int infer_threads = 2;
    GrpcInferenceService::Options service;
    GrpcCacheAdminService::Options cache_admin;
    // The listening port's credentials; null: plaintext (insecure) HTTP/2.
    std::shared_ptr<grpc::ServerCredentials> credentials{};
  };

  static absl::StatusOr<std::unique_ptr<GrpcServer>> Create(InferenceServer* server,
                                                            Options options);
  ~GrpcServer();

  GrpcServer(const GrpcServer&) = delete;
  GrpcServer& operator=(const GrpcServer&) = delete;

  // The port bound (the chosen one when Options::port was 0).
  int port() const { return port_; }
  // "host:port" as bound, for clients and logs.
  const std::string& address() const { return address_; }

  // Sets the health service's status from InferenceServer::IsReady().
  void RefreshHealth();

  // Graceful shutdown; see the class comment. A `timeout` <= 0 cancels in-flight calls at once;
  // absl::InfiniteDuration() waits for every one of them.
  void Shutdown(absl::Duration timeout);

 private:
  GrpcServer(InferenceServer* server, Options options);
  void PollHealth();
  bool StopRequested() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_; }

  InferenceServer* const server_;
  const Options options_;
  std::unique_ptr<GrpcInferenceService> service_;
  std::unique_ptr<GrpcCacheAdminService> cache_admin_;
  // kCompletionQueue's queues and threads; declared before grpc_server_ so the server goes first.
  std::unique_ptr<AsyncInferPollers> pollers_;
  std::unique_ptr<grpc::Server> grpc_server_;
  int port_ = 0;
  std::string address_;

  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
  // Last status given to the health service, so polling only writes on change.
  int health_serving_ ABSL_GUARDED_BY(mu_) = -1;
  std::thread health_thread_;
  // Serializes Shutdown() callers; held while gRPC drains.
  absl::Mutex shutdown_mu_;
};

}  // namespace brigade::frontend

#endif  // BRIGADE_FRONTEND_GRPC_GRPC_SERVER_H_
