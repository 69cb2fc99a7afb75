// A build without gRPC (BRIGADE_WITH_GRPC=OFF): `brigade serve` serves HTTP alone.
#include "spdlog/spdlog.h"
#include "tools/serve_grpc.h"

namespace brigade::tools {

bool GrpcFrontEnd::InBuild() { return false; }

absl::StatusOr<std::unique_ptr<GrpcFrontEnd>> GrpcFrontEnd::Create(const Options& options) {
  // serve_command.cc refuses the TLS flags before this; a caller that did not still gets no
  // plain-text port where it asked for a certificate.
  if (options.tls != nullptr) {
    return absl::FailedPreconditionError(
        "gRPC TLS asked for, but this build has no gRPC (BRIGADE_WITH_GRPC=OFF)");
  }
  spdlog::info("gRPC: not in this build (BRIGADE_WITH_GRPC=OFF); serving HTTP only");
  return nullptr;
}

}  // namespace brigade::tools
