#ifndef BRIGADE_TOOLS_CLIENT_GRPC_CLIENT_H_
#define BRIGADE_TOOLS_CLIENT_GRPC_CLIENT_H_

// GrpcClient: the KServe v2 / Triton gRPC API (inference.GRPCInferenceService) over one channel
// of its own. See client.h for the contract shared with the HTTP client.
//
// One client, one connection: the channel uses a local subchannel pool
// (GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL), so clients created with the same target do not share a
// TCP connection behind the caller's back; a load generator's workers each get their own.
//
// Per Infer: the request message is a member, cleared and refilled (its strings and repeated
// fields keep their allocations); the response message is reused when no output tensor from the
// previous call still refers to it (raw outputs are views into it, see Client::Infer).
//
// Thread safety: none (one thread at a time). Failure: the server's gRPC status as described in
// client_status.h; a call past `timeout_ms` is DEADLINE_EXCEEDED.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "protocol/grpc_service.grpc.pb.h"
#include "tools/client/client.h"

namespace brigade::client {

// The gRPC target for `address`: "host:port" (default port 8001) with an optional "grpc://" or
// "http://" scheme, or a gRPC URI ("dns:///...", "unix:...", "ipv4:...") passed through.
absl::StatusOr<std::string> GrpcTarget(std::string_view address);

class GrpcClient final : public Client {
 public:
  static absl::StatusOr<std::unique_ptr<GrpcClient>> Create(const ClientOptions& options);
  ~GrpcClient() override;

  ClientProtocol protocol() const override { return ClientProtocol::kGrpc; }

  absl::StatusOr<bool> ServerLive() override;
  absl::StatusOr<bool> ServerReady() override;
  absl::StatusOr<bool> ModelReady(std::string_view model, std::string_view version) override;
  absl::StatusOr<protocol::ServerMetadata> GetServerMetadata() override;
  absl::StatusOr<protocol::ModelMetadata> GetModelMetadata(std::string_view model,
                                                           std::string_view version) override;
  absl::StatusOr<config::ModelConfig> GetModelConfig(std::string_view model,
                                                     std::string_view version) override;
  absl::Status Infer(const InferSpec& request, InferResponse* response) override;
  absl::StatusOr<std::vector<protocol::ModelStatistics>> GetModelStatistics(
      std::string_view model, std::string_view version) override;
  absl::StatusOr<std::vector<protocol::RepositoryIndexEntry>> RepositoryIndex(
      bool ready_only) override;
  absl::Status LoadModel(std::string_view model, std::string_view config_json) override;
  absl::Status UnloadModel(std::string_view model) override;
  absl::Status RegisterSystemSharedMemory(const protocol::SharedMemoryRegion& region) override;
  absl::Status UnregisterSystemSharedMemory(std::string_view name) override;

  // Use Create(); the key keeps construction inside this class while allowing make_unique.
  class Key {
    friend class GrpcClient;
    Key() = default;
  };
  GrpcClient(Key, std::unique_ptr<inference::GRPCInferenceService::Stub> stub, int64_t timeout_ms,
             std::string bearer_token);

 private:
  // Sets the call's deadline from timeout_ms, and its authorization metadata.
  void Prepare(grpc::ClientContext* context) const;

  std::unique_ptr<inference::GRPCInferenceService::Stub> stub_;
  const int64_t timeout_ms_;
  // "Bearer <token>", or empty.
  const std::string authorization_;
  inference::ModelInferRequest infer_request_;
  std::shared_ptr<inference::ModelInferResponse> infer_response_;
};

}  // namespace brigade::client

#endif  // BRIGADE_TOOLS_CLIENT_GRPC_CLIENT_H_
