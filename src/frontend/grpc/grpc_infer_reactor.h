#ifndef BRIGADE_FRONTEND_GRPC_GRPC_INFER_REACTOR_H_
#define BRIGADE_FRONTEND_GRPC_GRPC_INFER_REACTOR_H_

// The unary ModelInfer RPC on gRPC's callback API, and the message allocator that lets its raw
// inputs be borrowed without a copy.
//
// InferMessageAllocator gives each ModelInfer call a request message in shared ownership. The
// codec's raw input tensors hold a reference to it (protocol/grpc/infer_messages.h), so gRPC
// releasing the call's messages never frees bytes a tensor still points into; the response message
// is owned by the call alone. GrpcInferenceService registers it with the method's handler; it must
// outlive the server.
//
// ModelInferReactor: one per call. On arrival it decodes the request (InferCallState,
// grpc_infer_call.h: t0, a CancelFlag, the earlier of the gRPC deadline and the `timeout`
// parameter) and hands it to InferenceServer::Infer. The request's completion callback (any thread)
// encodes the response and calls Finish(). If the call is cancelled first (client cancel,
// deadline, server shutdown), OnCancel sets the CancelFlag and finishes at once with CANCELLED;
// the completion that follows only drops its reference. When gRPC reports the call done (OnDone,
// after the final status was sent: t5), the request is reported to the server's RequestObserver
// with its stage stamps, outcome and the W3C trace context of the call's `traceparent` /
// `tracestate` metadata. The reactor deletes itself once both gRPC (OnDone) and the request's
// completion are through with it, so a completion arriving
// after the RPC ended never touches freed memory.
//
// Thread safety: gRPC and the completion callback may run concurrently; the first of them to
// claim `finished_` is the only one that touches the response and the context.

#include <atomic>
#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "core/clock.h"
#include "core/infer_request.h"
#include "frontend/grpc/grpc_infer_call.h"
#include "frontend/grpc/grpc_request_charge.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/message_allocator.h"
#include "grpcpp/support/server_callback.h"
#include "protocol/grpc_service.pb.h"
#include "protocol/shared_memory.h"
#include "server/inference_server.h"

namespace brigade::frontend {

class InferMessageAllocator final
    : public grpc::MessageAllocator<inference::ModelInferRequest, inference::ModelInferResponse> {
 public:
  grpc::MessageHolder<inference::ModelInferRequest, inference::ModelInferResponse>*
  AllocateMessages() override;

  // The request of a call whose messages this allocator made, in shared ownership; otherwise
  // (no allocator registered) a shared copy of `request`.
  static std::shared_ptr<ChargedInferRequest> SharedRequest(
      grpc::CallbackServerContext* context, const inference::ModelInferRequest* request);
};

class ModelInferReactor final : public grpc::ServerUnaryReactor {
 public:
  // Starts the call; returns the reactor for the method handler to return. `server`, `clock`
  // and `shared_memory` (system shared memory's regions; null: the feature is off) must outlive
  // every call (the GrpcServer shuts gRPC down before they go away). `forwarded`: the parameters
  // the call's metadata forwards (grpc_header_forwarding.h), or null. `charging`: where the
  // request message is charged before it is decoded (full: the call finishes UNAVAILABLE).
  static ModelInferReactor* Start(grpc::CallbackServerContext* context,
                                  const inference::ModelInferRequest* request,
                                  inference::ModelInferResponse* response, InferenceServer* server,
                                  const Clock* clock,
                                  const std::shared_ptr<const Parameters>& forwarded = nullptr,
                                  const protocol::SharedMemoryResolver* shared_memory = nullptr,
                                  RequestCharging charging = {});

  void OnCancel() override;
  void OnDone() override;

 private:
  ModelInferReactor(grpc::CallbackServerContext* context, inference::ModelInferResponse* response,
                    const Clock* clock)
      : context_(context), response_(response), call_(clock) {}
  ~ModelInferReactor() override = default;

  void Run(const inference::ModelInferRequest* request,
           const std::shared_ptr<const Parameters>& forwarded, InferenceServer* server,
           const protocol::SharedMemoryResolver* shared_memory, const RequestCharging& charging);
  void OnInferDone(absl::StatusOr<InferResponse> result);
  // Finishes the call unless someone already did; false if someone did.
  bool Claim() { return !finished_.exchange(true, std::memory_order_acq_rel); }
  void FinishWith(const absl::Status& status);
  void Unref();

  grpc::CallbackServerContext* const context_;
  inference::ModelInferResponse* const response_;
  // Touched before Run hands the request on, then only by whoever claimed `finished_` (before
  // it calls Finish, which OnDone follows), then by OnDone.
  InferCallState call_;
  const std::shared_ptr<CancelFlag> cancel_ = std::make_shared<CancelFlag>();
  std::atomic<bool> finished_{false};
  // One reference for gRPC (dropped in OnDone), one for the request's completion.
  std::atomic<int> refs_{2};
};

}  // namespace brigade::frontend

#endif  // BRIGADE_FRONTEND_GRPC_GRPC_INFER_REACTOR_H_
