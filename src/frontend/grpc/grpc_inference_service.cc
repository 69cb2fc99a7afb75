#include "frontend/grpc/grpc_inference_service.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "core/check.h"
#include "frontend/grpc/grpc_access.h"
#include "frontend/grpc/grpc_header_forwarding.h"
#include "frontend/grpc/grpc_infer_call.h"
#include "frontend/grpc/grpc_status.h"
#include "frontend/grpc/grpc_stream_reactor.h"
#include "protocol/grpc/admin_messages.h"
#include "protocol/grpc/infer_messages.h"
#include "protocol/model_version.h"

namespace brigade::frontend {

namespace {

// ModelInfer's position among grpc_service.proto's RPCs, the number gRPC's generated wrappers use
// for it. A wrong number would put another RPC on the chosen API; the server tests run ModelInfer
// and every other RPC on each API.
constexpr int kModelInferMethod = 5;

// How often a synchronous ModelInfer looks whether its call was cancelled while it waits.
constexpr absl::Duration kSyncCancelPoll = absl::Milliseconds(5);

}  // namespace

GrpcInferenceService::GrpcInferenceService(InferenceServer* server, Options options)
    : server_(server),
      clock_(server->clock()),
      options_(options),
      repository_worker_(options.max_queued_repository_calls) {
  switch (options_.infer_api) {
    case GrpcInferApi::kCallback: {
      // What the generated WithCallbackMethod_ModelInfer does, chosen here at run time.
      auto handler =
          std::make_unique<grpc::internal::CallbackUnaryHandler<inference::ModelInferRequest,
                                                                inference::ModelInferResponse>>(
              [this](grpc::CallbackServerContext* context,
                     const inference::ModelInferRequest* request,
                     inference::ModelInferResponse* response) {
                return ModelInferOnCallback(context, request, response);
              });
      handler->SetMessageAllocator(&infer_allocator_);
      MarkMethodCallback(kModelInferMethod, handler.release());  // gRPC owns handlers
      break;
    }
    case GrpcInferApi::kCompletionQueue:
      MarkMethodAsync(kModelInferMethod);
      break;
    case GrpcInferApi::kSync:
      break;  // the generated Service's own kind
  }
}

std::optional<grpc::Status> GrpcInferenceService::AdmitInfer(
    const grpc::ServerContextBase& context, std::shared_ptr<const Parameters>* forwarded) const {
  if (std::optional<grpc::Status> refused =
          RefuseGrpc(options_.access_gate, context, auth::Operation::kModelInfer)) {
    return refused;
  }
  absl::StatusOr<std::shared_ptr<const Parameters>> metadata =
      ForwardedMetadata(options_.header_forwarding, context);
  if (!metadata.ok()) return ToGrpcStatus(metadata.status());
  *forwarded = *std::move(metadata);
  return std::nullopt;
}

void GrpcInferenceService::RequestModelInfer(
    grpc::ServerContext* context, inference::ModelInferRequest* request,
    grpc::ServerAsyncResponseWriter<inference::ModelInferResponse>* writer,
    grpc::ServerCompletionQueue* queue, void* tag) {
  BRIGADE_CHECK(options_.infer_api == GrpcInferApi::kCompletionQueue,
                "RequestModelInfer needs infer_api kCompletionQueue");
  RequestAsyncUnary(kModelInferMethod, context, request, writer, queue, queue, tag);
}

grpc::ServerUnaryReactor* GrpcInferenceService::ServerLive(
    grpc::CallbackServerContext* context, const inference::ServerLiveRequest* /*request*/,
    inference::ServerLiveResponse* response) {
  if (std::optional<grpc::Status> refused =
          RefuseGrpc(options_.access_gate, *context, auth::Operation::kServerLive)) {
    return FinishRefused(context, *refused);
  }
  response->set_live(server_->IsLive());
  return FinishUnary(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* GrpcInferenceService::ServerReady(
    grpc::CallbackServerContext* context, const inference::ServerReadyRequest* /*request*/,
    inference::ServerReadyResponse* response) {
  if (std::optional<grpc::Status> refused =
          RefuseGrpc(options_.access_gate, *context, auth::Operation::kServerReady)) {
    return FinishRefused(context, *refused);
  }
  response->set_ready(server_->IsReady());
  return FinishUnary(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* GrpcInferenceService::ModelReady(
    grpc::CallbackServerContext* context, const inference::ModelReadyRequest* request,
    inference::ModelReadyResponse* response) {
  if (std::optional<grpc::Status> refused =
          RefuseGrpc(options_.access_gate, *context, auth::Operation::kModelReady)) {
    return FinishRefused(context, *refused);
  }
  absl::StatusOr<int64_t> version = protocol::ParseModelVersion(request->version(), "version");
  if (!version.ok()) return FinishUnary(context, version.status());
  // An unknown model or version is `ready: false` with OK, as Triton answers: clients poll this
  // until a model appears. Only a malformed version or a draining server is an error.
  absl::StatusOr<bool> ready = server_->ModelReady(request->name(), *version);
  if (!ready.ok()) return FinishUnary(context, ready.status());
  response->set_ready(*ready);
  return FinishUnary(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* GrpcInferenceService::ServerMetadata(
    grpc::CallbackServerContext* context, const inference::ServerMetadataRequest* /*request*/,
    inference::ServerMetadataResponse* response) {
  if (std::optional<grpc::Status> refused =
          RefuseGrpc(options_.access_gate, *context, auth::Operation::kServerMetadata)) {
    return FinishRefused(context, *refused);
  }
  protocol::grpc::EncodeServerMetadata(
      AdvertisedMetadata(server_->Metadata(), options_.shared_memory), response);
  return FinishUnary(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* GrpcInferenceService::ModelMetadata(
    grpc::CallbackServerContext* context, const inference::ModelMetadataRequest* request,
    inference::ModelMetadataResponse* response) {
  if (std::optional<grpc::Status> refused =
          RefuseGrpc(options_.access_gate, *context, auth::Operation::kModelMetadata)) {
    return FinishRefused(context, *refused);
  }
  absl::StatusOr<int64_t> version = protocol::ParseModelVersion(request->version(), "version");
  if (!version.ok()) return FinishUnary(context, version.status());
  absl::StatusOr<protocol::ModelMetadata> metadata =
      server_->GetModelMetadata(request->name(), *version);
  if (!metadata.ok()) return FinishUnary(context, metadata.status());
  protocol::grpc::EncodeModelMetadata(*metadata, response);
  return FinishUnary(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* GrpcInferenceService::ModelInferOnCallback(
    grpc::CallbackServerContext* context, const inference::ModelInferRequest* request,
    inference::ModelInferResponse* response) {
  std::shared_ptr<const Parameters> forwarded;
  if (std::optional<grpc::Status> refused = AdmitInfer(*context, &forwarded)) {
    return FinishRefused(context, *refused);
  }
  return ModelInferReactor::Start(context, request, response, server_, clock_, forwarded,
                                  options_.shared_memory, options_.charging);
}

grpc::Status GrpcInferenceService::ModelInfer(grpc::ServerContext* context,
                                              const inference::ModelInferRequest* request,
                                              inference::ModelInferResponse* response) {
  std::shared_ptr<const Parameters> forwarded;
  if (std::optional<grpc::Status> refused = AdmitInfer(*context, &forwarded)) return *refused;
  InferCallState call(clock_);
  // gRPC frees its request message when this handler returns, and raw input tensors may be
  // borrowed longer than that (a cached answer, a batch still being torn down): they borrow a
  // copy the request owns.
  auto shared = std::make_shared<ChargedInferRequest>();
  shared->message = *request;
  auto cancel = std::make_shared<CancelFlag>();
  absl::StatusOr<std::unique_ptr<InferRequest>> decoded =
      call.Decode(*context, std::move(shared), forwarded, server_, options_.shared_memory,
                  options_.charging, cancel);
  grpc::Status sent;
  if (!decoded.ok()) {
    sent = call.FinalStatus(decoded.status(), context);
  } else {
    // Shared with the completion, which may come after this handler gave up on a cancelled call.
    struct Completion {
      absl::Notification done;
      absl::StatusOr<InferResponse> result = absl::UnknownError("no answer yet");
    };
    auto completion = std::make_shared<Completion>();
    (*decoded)->on_complete = [completion](absl::StatusOr<InferResponse> result) {
      completion->result = std::move(result);
      completion->done.Notify();
    };
    server_->Infer(*std::move(decoded));
    while (!completion->done.WaitForNotificationWithTimeout(kSyncCancelPoll)) {
      if (context->IsCancelled()) {
        cancel->Cancel();
        break;
      }
    }
    sent = call.FinalStatus(completion->done.HasBeenNotified()
                                ? call.Encode(std::move(completion->result), response)
                                : absl::CancelledError("the call was cancelled"),
                            context);
  }
  call.Report(clock_->NowNs());
  return sent;
}

grpc::ServerBidiReactor<inference::ModelInferRequest, inference::ModelStreamInferResponse>*
GrpcInferenceService::ModelStreamInfer(grpc::CallbackServerContext* context) {
  if (std::optional<grpc::Status> refused =
          RefuseGrpc(options_.access_gate, *context, auth::Operation::kModelInfer)) {
    return new RefusedStream<inference::ModelInferRequest, inference::ModelStreamInferResponse>(
        *refused);
  }
  absl::StatusOr<std::shared_ptr<const Parameters>> forwarded =
      ForwardedMetadata(options_.header_forwarding, *context);
  if (!forwarded.ok()) {
    return new RefusedStream<inference::ModelInferRequest, inference::ModelStreamInferResponse>(
        ToGrpcStatus(forwarded.status()));
  }
  return StreamInferReactor::Start(context, server_, clock_, options_.stream_max_in_flight,
                                   *std::move(forwarded), options_.shared_memory,
                                   options_.charging);
}

grpc::ServerUnaryReactor* GrpcInferenceService::ModelConfig(
    grpc::CallbackServerContext* context, const inference::ModelConfigRequest* request,
    inference::ModelConfigResponse* response) {
  if (std::optional<grpc::Status> refused =
          RefuseGrpc(options_.access_gate, *context, auth::Operation::kModelConfig)) {
    return FinishRefused(context, *refused);
  }
  absl::StatusOr<int64_t> version = protocol::ParseModelVersion(request->version(), "version");
  if (!version.ok()) return FinishUnary(context, version.status());
  absl::StatusOr<config::ModelConfig> model_config =
      server_->GetModelConfig(request->name(), *version);
  if (!model_config.ok()) return FinishUnary(context, model_config.status());
  *response->mutable_config() = *std::move(model_config);
  return FinishUnary(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* GrpcInferenceService::ModelStatistics(
    grpc::CallbackServerContext* context, const inference::ModelStatisticsRequest* request,
    inference::ModelStatisticsResponse* response) {
  if (std::optional<grpc::Status> refused =
          RefuseGrpc(options_.access_gate, *context, auth::Operation::kModelStatistics)) {
    return FinishRefused(context, *refused);
  }
  absl::StatusOr<int64_t> version = protocol::ParseModelVersion(request->version(), "version");
  if (!version.ok()) return FinishUnary(context, version.status());
  absl::StatusOr<std::vector<protocol::ModelStatistics>> stats =
      server_->Statistics(request->name(), *version);
  if (!stats.ok()) return FinishUnary(context, stats.status());
  protocol::grpc::EncodeModelStatistics(*stats, response);
  return FinishUnary(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* GrpcInferenceService::RepositoryIndex(
    grpc::CallbackServerContext* context, const inference::RepositoryIndexRequest* request,
    inference::RepositoryIndexResponse* response) {
  if (std::optional<grpc::Status> refused =
          RefuseGrpc(options_.access_gate, *context, auth::Operation::kRepositoryIndex)) {
    return FinishRefused(context, *refused);
  }
  const absl::Status repository = protocol::grpc::CheckRepositoryName(request->repository_name());
  if (!repository.ok()) return FinishUnary(context, repository);
  absl::StatusOr<std::vector<protocol::RepositoryIndexEntry>> index =
      server_->RepositoryIndex(request->ready());
  if (!index.ok()) return FinishUnary(context, index.status());
  protocol::grpc::EncodeRepositoryIndex(*index, response);
  return FinishUnary(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* GrpcInferenceService::RepositoryModelLoad(
    grpc::CallbackServerContext* context, const inference::RepositoryModelLoadRequest* request,
    inference::RepositoryModelLoadResponse* /*response*/) {
  if (std::optional<grpc::Status> refused =
          RefuseGrpc(options_.access_gate, *context, auth::Operation::kRepositoryLoad)) {
    return FinishRefused(context, *refused);
  }
  absl::StatusOr<protocol::LoadModelRequest> load =
      protocol::grpc::DecodeRepositoryModelLoad(*request);
  if (!load.ok()) return FinishUnary(context, load.status());
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  // The call stays open until the task finishes it; gRPC's shutdown waits for that.
  const bool posted =
      repository_worker_.Post([this, context, reactor, load = *std::move(load)]() mutable {
        reactor->Finish(FinishStatus(server_->LoadModel(load), context));
      });
  if (!posted) {
    reactor->Finish(FinishStatus(
        absl::UnavailableError("too many repository requests are waiting; retry later"), context));
  }
  return reactor;
}

grpc::ServerUnaryReactor* GrpcInferenceService::RepositoryModelUnload(
    grpc::CallbackServerContext* context, const inference::RepositoryModelUnloadRequest* request,
    inference::RepositoryModelUnloadResponse* /*response*/) {
  if (std::optional<grpc::Status> refused =
          RefuseGrpc(options_.access_gate, *context, auth::Operation::kRepositoryUnload)) {
    return FinishRefused(context, *refused);
  }
  absl::StatusOr<std::string> name = protocol::grpc::DecodeRepositoryModelUnload(*request);
  if (!name.ok()) return FinishUnary(context, name.status());
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  const bool posted =
      repository_worker_.Post([this, context, reactor, name = *std::move(name)]() mutable {
        reactor->Finish(FinishStatus(server_->UnloadModel(name), context));
      });
  if (!posted) {
    reactor->Finish(FinishStatus(
        absl::UnavailableError("too many repository requests are waiting; retry later"), context));
  }
  return reactor;
}

grpc::ServerUnaryReactor* GrpcInferenceService::LogSettings(
    grpc::CallbackServerContext* context, const inference::LogSettingsRequest* request,
    inference::LogSettingsResponse* response) {
  if (std::optional<grpc::Status> refused =
          RefuseGrpc(options_.access_gate, *context, auth::Operation::kLogSettings)) {
    return FinishRefused(context, *refused);
  }
  absl::StatusOr<protocol::LogSettingsUpdate> update =
      protocol::grpc::DecodeLogSettingsRequest(*request);
  if (!update.ok()) return FinishUnary(context, update.status());
  absl::StatusOr<protocol::LogSettings> settings = server_->UpdateLogSettings(*update);
  if (!settings.ok()) return FinishUnary(context, settings.status());
  protocol::grpc::EncodeLogSettings(*settings, response);
  return FinishUnary(context, absl::OkStatus());
}

}  // namespace brigade::frontend
