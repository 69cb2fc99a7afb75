#ifndef BRIGADE_FRONTEND_GRPC_GRPC_INFERENCE_SERVICE_H_
#define BRIGADE_FRONTEND_GRPC_GRPC_INFERENCE_SERVICE_H_

// GrpcInferenceService: `inference.GRPCInferenceService` (KServe v2 + Triton extensions),
// answering every RPC from an InferenceServer. Every RPC but ModelInfer is on gRPC's callback API;
// ModelInfer, the one on the hot path, is on the API Options::infer_api names (the three are
// measured against each other in bench/grpc_infer_api.sh):
//
//   ModelInfer, kCallback          ModelInferReactor (grpc_infer_reactor.h): Finish() from the
//                                  completion, on gRPC's own threads
//   ModelInfer, kCompletionQueue   AsyncInferPollers (grpc_async_infer.h) call
//                                  RequestModelInfer on Brigade's polling threads
//   ModelInfer, kSync              the synchronous handler on gRPC's pool of threads, each
//                                  waiting for its request's completion
//   health, metadata, model config, statistics, repository index   answered inline (fast reads)
//   ModelStreamInfer    StreamInferReactor (grpc_stream_reactor.h)
//   RepositoryModelLoad / Unload   run on a BlockingWorker (they block until the model is
//                       loaded or unloaded); a full worker queue answers UNAVAILABLE
//   LogSettings, TraceSetting, SystemSharedMemory*   answered inline (the extensions' RPCs are in
//                       grpc_extension_rpcs.cc); CudaSharedMemory* answer UNIMPLEMENTED: this
//                       server runs models on CPUs
//
// Access: with an AccessGate every RPC is checked first (grpc_access.h); a refused stream is
// finished before its first read.
//
// Errors go through frontend/status_map.h (grpc_status.h), with `retry-after` trailing metadata
// when the status carries a retry hint.
//
// Thread safety: handlers run concurrently on gRPC's threads (and, with kCompletionQueue,
// ModelInfer on the pollers'). Ownership: `server` is borrowed
// and must outlive the grpc::Server this service is registered with (GrpcServer guarantees it by
// shutting gRPC down first). The service itself must outlive that grpc::Server too.

#include <memory>
#include <optional>

#include "core/blocking_worker.h"
#include "core/clock.h"
#include "frontend/auth/access_gate.h"
#include "frontend/grpc/grpc_infer_reactor.h"
#include "frontend/grpc/grpc_request_charge.h"
#include "frontend/shm/shared_memory_registry.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/async_unary_call.h"
#include "protocol/grpc_service.grpc.pb.h"
#include "protocol/header_forwarding.h"
#include "server/inference_server.h"

namespace brigade::frontend {

// Which of gRPC's server APIs carries ModelInfer (see the file comment).
enum class GrpcInferApi { kCallback, kCompletionQueue, kSync };

namespace grpc_internal {
using G = inference::GRPCInferenceService;
// Every RPC on the callback API except ModelInfer, which starts synchronous so the constructor can
// still make it asynchronous (gRPC drops a method's handler only when it turns a synchronous one
// async) or give it a callback handler. Generated wrappers, one per RPC of grpc_service.proto.
using GrpcServiceExceptModelInfer =
    G::WithCallbackMethod_ServerLive<G::WithCallbackMethod_ServerReady<
        G::WithCallbackMethod_ModelReady<G::WithCallbackMethod_ServerMetadata<
            G::WithCallbackMethod_ModelMetadata<G::WithCallbackMethod_ModelStreamInfer<
                G::WithCallbackMethod_ModelConfig<G::WithCallbackMethod_ModelStatistics<
                    G::WithCallbackMethod_RepositoryIndex<G::WithCallbackMethod_RepositoryModelLoad<
                        G::WithCallbackMethod_RepositoryModelUnload<
                            G::WithCallbackMethod_SystemSharedMemoryStatus<
                                G::WithCallbackMethod_SystemSharedMemoryRegister<
                                    G::WithCallbackMethod_SystemSharedMemoryUnregister<
                                        G::WithCallbackMethod_CudaSharedMemoryStatus<
                                            G::WithCallbackMethod_CudaSharedMemoryRegister<
                                                G::WithCallbackMethod_CudaSharedMemoryUnregister<
                                                    G::WithCallbackMethod_TraceSetting<
                                                        G::WithCallbackMethod_LogSettings<
                                                            G::Service>>>>>>>>>>>>>>>>>>>;
}  // namespace grpc_internal

class GrpcInferenceService final : public grpc_internal::GrpcServiceExceptModelInfer {
 public:
  struct Options {
    // The API ModelInfer is served on.
    GrpcInferApi infer_api = GrpcInferApi::kCallback;
    // Requests of one ModelStreamInfer stream inside the server at once (see
    // grpc_stream_reactor.h); reading pauses at the limit.
    int stream_max_in_flight = 64;
    // Repository load/unload requests waiting for the blocking worker.
    int max_queued_repository_calls = 16;
    // Who may call what (auth/access_gate.h), checked before a request is decoded; null: everyone
    // may call everything. Borrowed; must outlive the service.
    const auth::AccessGate* access_gate = nullptr;
    // Triton's --grpc-header-forward-pattern (protocol/header_forwarding.h); null: no metadata
    // becomes a parameter. Borrowed; must outlive the service.
    const protocol::HeaderForwarding* header_forwarding = nullptr;
    // System shared memory's regions (frontend/shm); null: the feature is off (its RPCs answer
    // UNIMPLEMENTED, inputs and outputs naming a region are refused). Borrowed; must outlive the
    // service.
    SharedMemoryRegistry* shared_memory = nullptr;
    // Where each inference request message is charged before it is decoded
    // (grpc_request_charge.h); one past the budget is answered UNAVAILABLE.
    RequestCharging charging;
  };

  GrpcInferenceService(InferenceServer* server, Options options);

  grpc::ServerUnaryReactor* ServerLive(grpc::CallbackServerContext* context,
                                       const inference::ServerLiveRequest* request,
                                       inference::ServerLiveResponse* response) override;
  grpc::ServerUnaryReactor* ServerReady(grpc::CallbackServerContext* context,
                                        const inference::ServerReadyRequest* request,
                                        inference::ServerReadyResponse* response) override;
  grpc::ServerUnaryReactor* ModelReady(grpc::CallbackServerContext* context,
                                       const inference::ModelReadyRequest* request,
                                       inference::ModelReadyResponse* response) override;
  grpc::ServerUnaryReactor* ServerMetadata(grpc::CallbackServerContext* context,
                                           const inference::ServerMetadataRequest* request,
                                           inference::ServerMetadataResponse* response) override;
  grpc::ServerUnaryReactor* ModelMetadata(grpc::CallbackServerContext* context,
                                          const inference::ModelMetadataRequest* request,
                                          inference::ModelMetadataResponse* response) override;
  // ModelInfer on the synchronous API (kSync): blocks gRPC's thread until the request completes
  // or the call is cancelled.
  grpc::Status ModelInfer(grpc::ServerContext* context, const inference::ModelInferRequest* request,
                          inference::ModelInferResponse* response) override;
  grpc::ServerBidiReactor<inference::ModelInferRequest, inference::ModelStreamInferResponse>*
  ModelStreamInfer(grpc::CallbackServerContext* context) override;
  grpc::ServerUnaryReactor* ModelConfig(grpc::CallbackServerContext* context,
                                        const inference::ModelConfigRequest* request,
                                        inference::ModelConfigResponse* response) override;
  grpc::ServerUnaryReactor* ModelStatistics(grpc::CallbackServerContext* context,
                                            const inference::ModelStatisticsRequest* request,
                                            inference::ModelStatisticsResponse* response) override;
  grpc::ServerUnaryReactor* RepositoryIndex(grpc::CallbackServerContext* context,
                                            const inference::RepositoryIndexRequest* request,
                                            inference::RepositoryIndexResponse* response) override;
  grpc::ServerUnaryReactor* RepositoryModelLoad(
      grpc::CallbackServerContext* context, const inference::RepositoryModelLoadRequest* request,
      inference::RepositoryModelLoadResponse* response) override;
  grpc::ServerUnaryReactor* RepositoryModelUnload(
      grpc::CallbackServerContext* context, const inference::RepositoryModelUnloadRequest* request,
      inference::RepositoryModelUnloadResponse* response) override;
  // Triton's logging extension: an empty request reads the settings, any setting changes them.
  grpc::ServerUnaryReactor* LogSettings(grpc::CallbackServerContext* context,
                                        const inference::LogSettingsRequest* request,
                                        inference::LogSettingsResponse* response) override;

  // Triton's trace extension: an empty request reads the settings (`model_name` empty: the
  // global ones), any setting changes them.
  grpc::ServerUnaryReactor* TraceSetting(grpc::CallbackServerContext* context,
                                         const inference::TraceSettingRequest* request,
                                         inference::TraceSettingResponse* response) override;
  // System shared memory (frontend/shm/shared_memory_registry.h says what each one does).
  grpc::ServerUnaryReactor* SystemSharedMemoryStatus(
      grpc::CallbackServerContext* context,
      const inference::SystemSharedMemoryStatusRequest* request,
      inference::SystemSharedMemoryStatusResponse* response) override;
  grpc::ServerUnaryReactor* SystemSharedMemoryRegister(
      grpc::CallbackServerContext* context,
      const inference::SystemSharedMemoryRegisterRequest* request,
      inference::SystemSharedMemoryRegisterResponse* response) override;
  grpc::ServerUnaryReactor* SystemSharedMemoryUnregister(
      grpc::CallbackServerContext* context,
      const inference::SystemSharedMemoryUnregisterRequest* request,
      inference::SystemSharedMemoryUnregisterResponse* response) override;
  // UNIMPLEMENTED, saying why: CUDA shared memory needs a GPU server.
  grpc::ServerUnaryReactor* CudaSharedMemoryStatus(
      grpc::CallbackServerContext* context, const inference::CudaSharedMemoryStatusRequest* request,
      inference::CudaSharedMemoryStatusResponse* response) override;
  grpc::ServerUnaryReactor* CudaSharedMemoryRegister(
      grpc::CallbackServerContext* context,
      const inference::CudaSharedMemoryRegisterRequest* request,
      inference::CudaSharedMemoryRegisterResponse* response) override;
  grpc::ServerUnaryReactor* CudaSharedMemoryUnregister(
      grpc::CallbackServerContext* context,
      const inference::CudaSharedMemoryUnregisterRequest* request,
      inference::CudaSharedMemoryUnregisterResponse* response) override;

  // kCompletionQueue only: asks gRPC for the next ModelInfer call on `queue`; `tag` comes back on
  // it when one arrived (ok) or the server shut down first (not ok).
  void RequestModelInfer(grpc::ServerContext* context, inference::ModelInferRequest* request,
                         grpc::ServerAsyncResponseWriter<inference::ModelInferResponse>* writer,
                         grpc::ServerCompletionQueue* queue, void* tag);

  // The checks every ModelInfer call passes before its request is decoded, whichever API carries
  // it: the access gate, then the metadata forwarded as parameters (stored in `forwarded`). The
  // status to refuse the call with, or nullopt.
  std::optional<grpc::Status> AdmitInfer(const grpc::ServerContextBase& context,
                                         std::shared_ptr<const Parameters>* forwarded) const;

  InferenceServer* server() const { return server_; }
  const Clock* clock() const { return clock_; }
  const Options& options() const { return options_; }

 private:
  // ModelInfer on the callback API (kCallback).
  grpc::ServerUnaryReactor* ModelInferOnCallback(grpc::CallbackServerContext* context,
                                                 const inference::ModelInferRequest* request,
                                                 inference::ModelInferResponse* response);

  InferenceServer* const server_;
  const Clock* const clock_;
  const Options options_;
  InferMessageAllocator infer_allocator_;
  BlockingWorker repository_worker_;
};

}  // namespace brigade::frontend

#endif  // BRIGADE_FRONTEND_GRPC_GRPC_INFERENCE_SERVICE_H_
