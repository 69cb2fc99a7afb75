#ifndef BRIGADE_FRONTEND_GRPC_GRPC_ACCESS_H_
#define BRIGADE_FRONTEND_GRPC_GRPC_ACCESS_H_

// The gRPC side of access control: a call's metadata handed to the AccessGate
// (`authorization: Bearer <token>`, Triton's `triton-grpc-protocol-<key>`), and the status a
// refused call finishes with: UNAUTHENTICATED (no or unknown token), PERMISSION_DENIED (scope),
// UNAVAILABLE (a Triton-restricted protocol, as Triton answers).
//
// Stateless; safe from any thread. The gate is borrowed for the call.

#include <optional>
#include <string>
#include <vector>

#include "frontend/auth/access_gate.h"
#include "grpcpp/security/auth_context.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/server_callback.h"
#include "grpcpp/support/status.h"

namespace brigade::frontend {

// The names of the client certificate the call's TLS handshake verified (the same rules as
// tls/peer_names.h: subject alternative names, then the common name); empty without one.
std::vector<std::string> GrpcPeerNames(const grpc::AuthContext& auth);

// nullopt when `gate` is null or lets the call through; else the status to finish it with.
std::optional<grpc::Status> RefuseGrpc(const auth::AccessGate* gate,
                                       const grpc::ServerContextBase& context,
                                       auth::Operation operation);

// A unary call finished at once with `status` on gRPC's default reactor.
grpc::ServerUnaryReactor* FinishRefused(grpc::CallbackServerContext* context,
                                        const grpc::Status& status);

// A bidirectional stream finished at once with `status`, before reading anything; deletes itself
// when gRPC is done with it.
template <typename Request, typename Response>
class RefusedStream final : public grpc::ServerBidiReactor<Request, Response> {
 public:
  explicit RefusedStream(const grpc::Status& status) { this->Finish(status); }
  void OnDone() override { delete this; }
};

}  // namespace brigade::frontend

#endif  // BRIGADE_FRONTEND_GRPC_GRPC_ACCESS_H_
