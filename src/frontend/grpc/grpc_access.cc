#include "frontend/grpc/grpc_access.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/tls/peer_names.h"
#include "grpc/grpc_security_constants.h"

namespace brigade::frontend {

namespace {

// gRPC lists IP address SANs among the names; HTTP's side (tls/peer_names.h) leaves them out,
// and so does this one, so a `cert:` line means the same on both.
bool IsIpAddress(std::string_view name) {
  const std::string text(name);
  unsigned char address[sizeof(in6_addr)];
  return inet_pton(AF_INET, text.c_str(), address) == 1 ||
         inet_pton(AF_INET6, text.c_str(), address) == 1;
}

}  // namespace

std::vector<std::string> GrpcPeerNames(const grpc::AuthContext& auth) {
  std::vector<std::string> names;
  // gRPC fills these only from a certificate its handshake verified.
  if (!auth.IsPeerAuthenticated()) return names;
  auto add = [&names](const std::vector<grpc::string_ref>& values) {
    for (const grpc::string_ref& value : values) {
      const std::string_view name(value.data(), value.size());
      const bool printable =
          std::all_of(name.begin(), name.end(), [](char c) { return c > 0x20 && c < 0x7f; });
      if (names.size() < tls::kMaxPeerNames && !name.empty() &&
          name.size() <= tls::kMaxPeerNameChars && printable && !IsIpAddress(name)) {
        names.emplace_back(name);
      }
    }
  };
  add(auth.FindPropertyValues(GRPC_X509_SAN_PROPERTY_NAME));
  add(auth.FindPropertyValues(GRPC_X509_CN_PROPERTY_NAME));
  return names;
}

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
  std::vector<std::string> names;
  auto peer_names = [&context, &names] {
    names = GrpcPeerNames(*context.auth_context());
    return std::span<const std::string>(names);
  };
  const auth::Decision decision = gate->Check(
      {.operation = operation, .http = false, .header = header, .peer_names = peer_names});
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
