#include "frontend/grpc/grpc_header_forwarding.h"

#include <string_view>

namespace brigade::frontend {

absl::StatusOr<std::shared_ptr<const Parameters>> ForwardedMetadata(
    const protocol::HeaderForwarding* forwarding, const grpc::ServerContextBase& context) {
  if (forwarding == nullptr) return nullptr;
  Parameters forwarded;
  size_t count = 0;
  for (const auto& [key, value] : context.client_metadata()) {
    const std::string_view name(key.data(), key.size());
    if (name.ends_with("-bin")) continue;
    if (absl::Status status = forwarding->Forward(
            name, std::string_view(value.data(), value.size()), &forwarded, &count);
        !status.ok()) {
      return status;
    }
  }
  if (forwarded.empty()) return nullptr;
  return std::make_shared<const Parameters>(std::move(forwarded));
}

}  // namespace brigade::frontend
