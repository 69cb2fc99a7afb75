#ifndef BRIGADE_TOOLS_SERVE_GRPC_H_
#define BRIGADE_TOOLS_SERVE_GRPC_H_

// The gRPC front end as `brigade serve` runs it: its TLS credentials and its server behind one
// small interface, so that serve_command.cc reads the same in a build without gRPC. The build
// compiles exactly one of serve_grpc.cc (BRIGADE_WITH_GRPC=ON: frontend/grpc) and
// serve_grpc_none.cc (OFF, the edge preset: Create answers null and says so once).
//
// Thread safety: Create and Start from the serving thread; RefreshHealth and Shutdown from any
// thread (see frontend/grpc/grpc_server.h); UpdateTls from one thread at a time.
// Ownership: the server, the access gate, the forwarding and the shared-memory registry that
// Start borrows must outlive Shutdown().
// Failure: Create answers the TLS credentials' error (in a build without gRPC, FAILED_PRECONDITION
// for any TLS: a certificate asked for is never silently dropped), Start the server's (a port in
// use).

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/memory_budget.h"
#include "frontend/auth/access_gate.h"
#include "frontend/shm/shared_memory_registry.h"
#include "frontend/tls/tls_credentials.h"
#include "protocol/header_forwarding.h"
#include "server/inference_server.h"
#include "telemetry/counter.h"

namespace brigade::tools {

class GrpcFrontEnd {
 public:
  struct Options {
    std::string host = "0.0.0.0";
    int port = 8001;
    int64_t max_receive_message_bytes = int64_t{64} << 20;
    // The same defaults as frontend::GrpcServer::Options' (which a build without gRPC lacks).
    int max_concurrent_streams = 1024;
    int max_metadata_bytes = 16 * 1024;
    // The gRPC API ModelInfer is served on: "callback", "completion-queue" or "sync"
    // (frontend/grpc/grpc_inference_service.h), and the threads of the latter two.
    std::string infer_api = "callback";
    int infer_threads = 2;
    // The certificate to serve TLS with, or null for plain text; read during Create only.
    const frontend::tls::TlsCredentials* tls = nullptr;
    bool require_client_cert = false;
    // How often gRPC re-reads the credentials UpdateTls writes (GrpcTlsCredentials' refresh):
    // a rotation reaches new connections within it.
    absl::Duration tls_refresh = absl::Seconds(1);
    // The in-flight budget request messages are charged to (null: none); borrowed, outlives the
    // front end and every request it handed on.
    MemoryBudget* memory_budget = nullptr;
  };

  // False in a build without gRPC, where Create answers null: callers refuse gRPC-only flags
  // (TLS) before reading the files they name.
  static bool InBuild();

  // Null (and a log line saying so) in a build without gRPC.
  static absl::StatusOr<std::unique_ptr<GrpcFrontEnd>> Create(const Options& options);
  virtual ~GrpcFrontEnd() = default;

  // Listens on the options' address and serves `server`; `forwarding` (may be null) picks the
  // call metadata forwarded as request parameters, `shared_memory` (may be null: the RPCs answer
  // that it is off) holds the regions registered over either protocol; `budget_refusals` (may be
  // null) counts the messages the options' memory budget refused.
  virtual absl::Status Start(InferenceServer* server, frontend::auth::AccessGate* gate,
                             const protocol::HeaderForwarding* forwarding,
                             frontend::SharedMemoryRegistry* shared_memory,
                             telemetry::Counter* budget_refusals) = 0;
  // The port bound (after Start).
  virtual int port() const = 0;
  virtual bool serves_tls() const = 0;
  virtual void RefreshHealth() = 0;
  virtual void Shutdown(absl::Duration drain) = 0;
  // Takes a rotated certificate into use; only when serves_tls().
  virtual absl::Status UpdateTls(const frontend::tls::TlsCredentials& next) = 0;
};

}  // namespace brigade::tools

#endif  // BRIGADE_TOOLS_SERVE_GRPC_H_
