#include "frontend/grpc/grpc_access.h"

#include <string>

namespace brigade::frontend {

std::optional<grpc::Status> RefuseGrpc(const auth::AccessGate* gate,
                                       const grpc::ServerContextBase& context,
                                       auth::Operation operation) {
  if (gate == nullptr) return std::nullopt;
  const auto& metadata = context.client_metadata();
  // gRPC delivers metadata keys in lower case, and the policy asks for lower-case names.
  auto header = [&metadata](std::string_view name) -> std::optional<std::string_view> {
    const auto it = metadata.find(grpc::string_ref(name.data(), name.size()));
    if (it == metadata.end()) return std::nullopt;
    return std::string_view(it->second.data(), it->second.size());
  };
  const auth::Decision decision =
      gate->Check({.operation = operation, .http = false, .header = header});
  if (decision.ok()) return std::nullopt;
  return grpc::Status(static_cast<grpc::StatusCode>(auth::GrpcCodeFor(decision.refusal)),
                      decision.message);
}

grpc::ServerUnaryReactor* FinishRefused(grpc::CallbackServerContext* context,
                                        const grpc::Status& status) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(status);
  return reactor;
}

}  // namespace brigade::frontend
