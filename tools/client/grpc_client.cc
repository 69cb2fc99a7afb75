#include "tools/client/grpc_client.h"

#include <chrono>
#include <fstream>
#include <limits>
#include <sstream>

#include "core/status_macros.h"
#include "core/strings.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"
#include "protocol/grpc/admin_messages.h"
#include "protocol/grpc/infer_messages.h"
#include "tools/client/bearer_token.h"
#include "tools/client/client_status.h"
#include "tools/client/http_client.h"

namespace brigade::client {
namespace {

constexpr int kDefaultGrpcPort = 8001;

absl::Status FromGrpc(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return GrpcError(static_cast<int>(status.error_code()), status.error_message());
}

absl::StatusOr<std::string> ReadPem(std::string_view what, const std::string& path) {
  if (path.empty()) return std::string();
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in.is_open() || in.bad()) {
    return absl::InvalidArgumentError(StrCat(what, " '", path, "' cannot be read"));
  }
  return text.str();
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> Credentials(
    const ClientOptions::Tls& tls) {
  if (!tls.enabled) return grpc::InsecureChannelCredentials();
  if (tls.client_cert_path.empty() != tls.client_key_path.empty()) {
    return absl::InvalidArgumentError("a client certificate and its key go together");
  }
  grpc::SslCredentialsOptions ssl;
  BRIGADE_ASSIGN_OR_RETURN(ssl.pem_root_certs, ReadPem("root certificates", tls.root_cert_path));
  BRIGADE_ASSIGN_OR_RETURN(ssl.pem_cert_chain, ReadPem("client certificate", tls.client_cert_path));
  BRIGADE_ASSIGN_OR_RETURN(ssl.pem_private_key, ReadPem("client key", tls.client_key_path));
  return grpc::SslCredentials(ssl);
}

}  // namespace

absl::StatusOr<std::string> GrpcTarget(std::string_view address) {
  for (std::string_view scheme : {"dns:", "unix:", "ipv4:", "ipv6:"}) {
    if (address.starts_with(scheme)) return std::string(address);
  }
  std::string_view rest = address;
  if (rest.starts_with("grpc://")) rest.remove_prefix(7);
  BRIGADE_ASSIGN_OR_RETURN(HostPort host_port, ParseHostPort(rest, kDefaultGrpcPort));
  if (host_port.host.find(':') != std::string::npos) {
    return StrCat("[", host_port.host, "]:", host_port.port);
  }
  return StrCat(host_port.host, ":", host_port.port);
}

absl::StatusOr<std::unique_ptr<GrpcClient>> GrpcClient::Create(const ClientOptions& options) {
  BRIGADE_ASSIGN_OR_RETURN(std::string target, GrpcTarget(options.address));
  if (options.timeout_ms < 0 || options.max_response_bytes <= 0) {
    return absl::InvalidArgumentError("timeout_ms must be >= 0 and max_response_bytes > 0");
  }
  grpc::ChannelArguments arguments;
  arguments.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  arguments.SetMaxReceiveMessageSize(static_cast<int>(
      std::min<int64_t>(options.max_response_bytes, std::numeric_limits<int>::max())));
  arguments.SetMaxSendMessageSize(-1);
  BRIGADE_ASSIGN_OR_RETURN(std::shared_ptr<grpc::ChannelCredentials> credentials,
                           Credentials(options.tls));
  std::shared_ptr<grpc::Channel> channel =
      grpc::CreateCustomChannel(target, credentials, arguments);
  if (channel == nullptr) {
    return absl::InvalidArgumentError(StrCat("cannot create a gRPC channel to '", target, "'"));
  }
  BRIGADE_RETURN_IF_ERROR(CheckBearerToken(options.bearer_token));
  return std::make_unique<GrpcClient>(Key(), inference::GRPCInferenceService::NewStub(channel),
                                      options.timeout_ms, options.bearer_token);
}

GrpcClient::GrpcClient(Key, std::unique_ptr<inference::GRPCInferenceService::Stub> stub,
                       int64_t timeout_ms, std::string bearer_token)
    : stub_(std::move(stub)),
      timeout_ms_(timeout_ms),
      authorization_(bearer_token.empty() ? std::string() : StrCat("Bearer ", bearer_token)),
      infer_response_(std::make_shared<inference::ModelInferResponse>()) {}

GrpcClient::~GrpcClient() = default;

void GrpcClient::Prepare(grpc::ClientContext* context) const {
  if (timeout_ms_ > 0) {
    context->set_deadline(std::chrono::system_clock::now() +
                          std::chrono::milliseconds(timeout_ms_));
  }
  if (!authorization_.empty()) context->AddMetadata("authorization", authorization_);
}

absl::StatusOr<bool> GrpcClient::ServerLive() {
  grpc::ClientContext context;
  Prepare(&context);
  inference::ServerLiveResponse response;
  BRIGADE_RETURN_IF_ERROR(
      FromGrpc(stub_->ServerLive(&context, inference::ServerLiveRequest(), &response)));
  return response.live();
}

absl::StatusOr<bool> GrpcClient::ServerReady() {
  grpc::ClientContext context;
  Prepare(&context);
  inference::ServerReadyResponse response;
  BRIGADE_RETURN_IF_ERROR(
      FromGrpc(stub_->ServerReady(&context, inference::ServerReadyRequest(), &response)));
  return response.ready();
}

absl::StatusOr<bool> GrpcClient::ModelReady(std::string_view model, std::string_view version) {
  grpc::ClientContext context;
  Prepare(&context);
  inference::ModelReadyRequest request;
  request.set_name(std::string(model));
  request.set_version(std::string(version));
  inference::ModelReadyResponse response;
  BRIGADE_RETURN_IF_ERROR(FromGrpc(stub_->ModelReady(&context, request, &response)));
  return response.ready();
}

absl::StatusOr<protocol::ServerMetadata> GrpcClient::GetServerMetadata() {
  grpc::ClientContext context;
  Prepare(&context);
  inference::ServerMetadataResponse response;
  BRIGADE_RETURN_IF_ERROR(
      FromGrpc(stub_->ServerMetadata(&context, inference::ServerMetadataRequest(), &response)));
  return protocol::grpc::DecodeServerMetadata(response);
}

absl::StatusOr<protocol::ModelMetadata> GrpcClient::GetModelMetadata(std::string_view model,
                                                                     std::string_view version) {
  grpc::ClientContext context;
  Prepare(&context);
  inference::ModelMetadataRequest request;
  request.set_name(std::string(model));
  request.set_version(std::string(version));
  inference::ModelMetadataResponse response;
  BRIGADE_RETURN_IF_ERROR(FromGrpc(stub_->ModelMetadata(&context, request, &response)));
  return protocol::grpc::DecodeModelMetadata(response);
}

absl::StatusOr<config::ModelConfig> GrpcClient::GetModelConfig(std::string_view model,
                                                               std::string_view version) {
  grpc::ClientContext context;
  Prepare(&context);
  inference::ModelConfigRequest request;
  request.set_name(std::string(model));
  request.set_version(std::string(version));
  inference::ModelConfigResponse response;
  BRIGADE_RETURN_IF_ERROR(FromGrpc(stub_->ModelConfig(&context, request, &response)));
  return std::move(*response.mutable_config());
}

absl::Status GrpcClient::Infer(const InferSpec& request, InferResponse* response) {
  // Release views into the previous response message first, so it can be reused.
  response->outputs.clear();
  BRIGADE_RETURN_IF_ERROR(protocol::grpc::EncodeModelInferRequest(request, &infer_request_));
  if (infer_response_.use_count() > 1) {
    infer_response_ = std::make_shared<inference::ModelInferResponse>();
  } else {
    infer_response_->Clear();
  }
  grpc::ClientContext context;
  Prepare(&context);
  BRIGADE_RETURN_IF_ERROR(
      FromGrpc(stub_->ModelInfer(&context, infer_request_, infer_response_.get())));
  return protocol::grpc::DecodeModelInferResponse(infer_response_, response);
}

absl::StatusOr<std::vector<protocol::ModelStatistics>> GrpcClient::GetModelStatistics(
    std::string_view model, std::string_view version) {
  grpc::ClientContext context;
  Prepare(&context);
  inference::ModelStatisticsRequest request;
  request.set_name(std::string(model));
  request.set_version(std::string(version));
  inference::ModelStatisticsResponse response;
  BRIGADE_RETURN_IF_ERROR(FromGrpc(stub_->ModelStatistics(&context, request, &response)));
  return protocol::grpc::DecodeModelStatistics(response);
}

absl::StatusOr<std::vector<protocol::RepositoryIndexEntry>> GrpcClient::RepositoryIndex(
    bool ready_only) {
  grpc::ClientContext context;
  Prepare(&context);
  inference::RepositoryIndexRequest request;
  request.set_ready(ready_only);
  inference::RepositoryIndexResponse response;
  BRIGADE_RETURN_IF_ERROR(FromGrpc(stub_->RepositoryIndex(&context, request, &response)));
  return protocol::grpc::DecodeRepositoryIndex(response);
}

absl::Status GrpcClient::LoadModel(std::string_view model, std::string_view config_json) {
  grpc::ClientContext context;
  Prepare(&context);
  inference::RepositoryModelLoadRequest request;
  request.set_model_name(std::string(model));
  if (!config_json.empty()) {
    (*request.mutable_parameters())["config"].set_string_param(std::string(config_json));
  }
  inference::RepositoryModelLoadResponse response;
  return FromGrpc(stub_->RepositoryModelLoad(&context, request, &response));
}

absl::Status GrpcClient::UnloadModel(std::string_view model) {
  grpc::ClientContext context;
  Prepare(&context);
  inference::RepositoryModelUnloadRequest request;
  request.set_model_name(std::string(model));
  inference::RepositoryModelUnloadResponse response;
  return FromGrpc(stub_->RepositoryModelUnload(&context, request, &response));
}

absl::Status GrpcClient::RegisterSystemSharedMemory(const protocol::SharedMemoryRegion& region) {
  grpc::ClientContext context;
  Prepare(&context);
  inference::SystemSharedMemoryRegisterRequest request;
  request.set_name(region.name);
  request.set_key(region.key);
  request.set_offset(region.offset);
  request.set_byte_size(region.byte_size);
  inference::SystemSharedMemoryRegisterResponse response;
  return FromGrpc(stub_->SystemSharedMemoryRegister(&context, request, &response));
}

absl::Status GrpcClient::UnregisterSystemSharedMemory(std::string_view name) {
  grpc::ClientContext context;
  Prepare(&context);
  inference::SystemSharedMemoryUnregisterRequest request;
  request.set_name(std::string(name));
  inference::SystemSharedMemoryUnregisterResponse response;
  return FromGrpc(stub_->SystemSharedMemoryUnregister(&context, request, &response));
}

}  // namespace brigade::client
