#include "tools/serve_grpc.h"

#include <utility>

#include "core/strings.h"
#include "frontend/grpc/grpc_server.h"
#include "frontend/grpc/grpc_tls_credentials.h"

namespace brigade::tools {
namespace {

absl::StatusOr<frontend::GrpcInferApi> ParseInferApi(const std::string& name) {
  if (name == "callback") return frontend::GrpcInferApi::kCallback;
  if (name == "completion-queue") return frontend::GrpcInferApi::kCompletionQueue;
  if (name == "sync") return frontend::GrpcInferApi::kSync;
  return absl::InvalidArgumentError(
      StrCat("--grpc-infer-api \"", name, "\" is not one of callback, completion-queue, sync"));
}

class ServedGrpc final : public GrpcFrontEnd {
 public:
  ServedGrpc(Options options, std::unique_ptr<frontend::GrpcTlsCredentials> tls)
      : options_(std::move(options)), tls_(std::move(tls)) {}

  absl::Status Start(InferenceServer* server, frontend::auth::AccessGate* gate,
                     const protocol::HeaderForwarding* forwarding,
                     frontend::SharedMemoryRegistry* shared_memory,
                     telemetry::Counter* budget_refusals) override {
    frontend::GrpcServer::Options options;
    options.host = options_.host;
    options.port = options_.port;
    options.max_receive_message_bytes = options_.max_receive_message_bytes;
    options.max_concurrent_streams = options_.max_concurrent_streams;
    options.max_metadata_bytes = options_.max_metadata_bytes;
    options.infer_threads = options_.infer_threads;
    absl::StatusOr<frontend::GrpcInferApi> api = ParseInferApi(options_.infer_api);
    if (!api.ok()) return api.status();
    options.service.infer_api = *api;
    options.service.access_gate = gate;
    options.service.header_forwarding = forwarding;
    options.service.shared_memory = shared_memory;
    options.service.charging = {.budget = options_.memory_budget, .refusals = budget_refusals};
    options.cache_admin.access_gate = gate;
    if (tls_ != nullptr) options.credentials = tls_->credentials();
    absl::StatusOr<std::unique_ptr<frontend::GrpcServer>> created =
        frontend::GrpcServer::Create(server, options);
    if (!created.ok()) return created.status();
    server_ = *std::move(created);
    return absl::OkStatus();
  }
  int port() const override { return server_ != nullptr ? server_->port() : 0; }
  bool serves_tls() const override { return tls_ != nullptr; }
  void RefreshHealth() override {
    if (server_ != nullptr) server_->RefreshHealth();
  }
  void Shutdown(absl::Duration drain) override {
    if (server_ != nullptr) server_->Shutdown(drain);
  }
  absl::Status UpdateTls(const frontend::tls::TlsCredentials& next) override {
    return tls_->Update(next);
  }

 private:
  const Options options_;
  std::unique_ptr<frontend::GrpcTlsCredentials> tls_;
  std::unique_ptr<frontend::GrpcServer> server_;
};

}  // namespace

bool GrpcFrontEnd::InBuild() { return true; }

absl::StatusOr<std::unique_ptr<GrpcFrontEnd>> GrpcFrontEnd::Create(const Options& options) {
  std::unique_ptr<frontend::GrpcTlsCredentials> tls;
  if (options.tls != nullptr) {
    absl::StatusOr<std::unique_ptr<frontend::GrpcTlsCredentials>> created =
        frontend::GrpcTlsCredentials::Create(
            *options.tls,
            {.require_client_cert = options.require_client_cert, .refresh = options.tls_refresh});
    if (!created.ok()) return created.status();
    tls = *std::move(created);
  }
  return std::make_unique<ServedGrpc>(options, std::move(tls));
}

}  // namespace brigade::tools
