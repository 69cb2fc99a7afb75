#include "tools/client/client.h"

#include "tools/client/grpc_client.h"
#include "tools/client/http_client.h"

namespace brigade::client {

std::string_view ClientProtocolName(ClientProtocol protocol) {
  return protocol == ClientProtocol::kGrpc ? "grpc" : "http";
}

absl::StatusOr<std::unique_ptr<Client>> Client::Create(const ClientOptions& options) {
  if (options.protocol == ClientProtocol::kGrpc) return GrpcClient::Create(options);
  return HttpClient::Create(options);
}

}  // namespace brigade::client
