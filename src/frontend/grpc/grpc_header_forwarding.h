#ifndef BRIGADE_FRONTEND_GRPC_GRPC_HEADER_FORWARDING_H_
#define BRIGADE_FRONTEND_GRPC_GRPC_HEADER_FORWARDING_H_

// The gRPC side of Triton's header forwarding (--grpc-header-forward-pattern,
// protocol/header_forwarding.h): an inference call's metadata entries that the pattern matches,
// read once per call (a stream's metadata is its every request's), as the parameters they
// become. Binary entries (keys ending in "-bin") are never forwarded: a parameter is text.
//
// Stateless; safe from any thread. `forwarding` is borrowed for the call.

#include <memory>

#include "absl/status/statusor.h"
#include "core/parameters.h"
#include "grpcpp/server_context.h"
#include "protocol/header_forwarding.h"

namespace brigade::frontend {

// Null when `forwarding` is null or no entry matches; INVALID_ARGUMENT naming an entry that
// Forward refuses.
absl::StatusOr<std::shared_ptr<const Parameters>> ForwardedMetadata(
    const protocol::HeaderForwarding* forwarding, const grpc::ServerContextBase& context);

}  // namespace brigade::frontend

#endif  // BRIGADE_FRONTEND_GRPC_GRPC_HEADER_FORWARDING_H_
