#include "frontend/grpc/grpc_infer_reactor.h"

#include <utility>

namespace brigade::frontend {
namespace {

using inference::ModelInferRequest;
using inference::ModelInferResponse;

// The request lives apart from the holder so raw input tensors can outlive the call; the
// response is the holder's own (it is serialized before Release and never borrowed).
class SharedRequestHolder final
    : public grpc::MessageHolder<ModelInferRequest, ModelInferResponse> {
 public:
  SharedRequestHolder() {
    set_request(&request_->message);
    set_response(&response_);
  }
  // gRPC's allocator contract: Release() ends the holder.
  void Release() override { delete this; }

  const std::shared_ptr<ChargedInferRequest>& shared_request() const { return request_; }

 private:
  const std::shared_ptr<ChargedInferRequest> request_ = std::make_shared<ChargedInferRequest>();
  ModelInferResponse response_;
};

}  // namespace

grpc::MessageHolder<ModelInferRequest, ModelInferResponse>*
InferMessageAllocator::AllocateMessages() {
  // Ownership passes to gRPC, which calls Release() when the call is over.
  return std::make_unique<SharedRequestHolder>().release();
}

std::shared_ptr<ChargedInferRequest> InferMessageAllocator::SharedRequest(
    grpc::CallbackServerContext* context, const ModelInferRequest* request) {
  auto* holder = dynamic_cast<SharedRequestHolder*>(context->GetRpcAllocatorState());
  if (holder != nullptr && &holder->shared_request()->message == request) {
    return holder->shared_request();
  }
  auto copy = std::make_shared<ChargedInferRequest>();
  copy->message = *request;
  return copy;
}

ModelInferReactor* ModelInferReactor::Start(grpc::CallbackServerContext* context,
                                            const ModelInferRequest* request,
                                            ModelInferResponse* response, InferenceServer* server,
                                            const Clock* clock,
                                            const std::shared_ptr<const Parameters>& forwarded,
                                            const protocol::SharedMemoryResolver* shared_memory,
                                            RequestCharging charging) {
  // gRPC's callback API owns reactors through raw pointers; this one deletes itself in Unref().
  auto* reactor = new ModelInferReactor(context, response, clock);
  reactor->Run(request, forwarded, server, shared_memory, charging);
  return reactor;
}

void ModelInferReactor::Run(const ModelInferRequest* request,
                            const std::shared_ptr<const Parameters>& forwarded,
                            InferenceServer* server,
                            const protocol::SharedMemoryResolver* shared_memory,
                            const RequestCharging& charging) {
  absl::StatusOr<std::unique_ptr<InferRequest>> decoded =
      call_.Decode(*context_, InferMessageAllocator::SharedRequest(context_, request), forwarded,
                   server, shared_memory, charging, cancel_);
  if (!decoded.ok()) {
    if (Claim()) FinishWith(decoded.status());
    Unref();  // no completion will come
    return;
  }
  std::unique_ptr<InferRequest> infer = *std::move(decoded);
  // The completion may run on this thread (early errors, a batch run to completion) or on an
  // instance thread.
  infer->on_complete = [this](absl::StatusOr<InferResponse> result) {
    OnInferDone(std::move(result));
  };
  server->Infer(std::move(infer));
}

void ModelInferReactor::OnInferDone(absl::StatusOr<InferResponse> result) {
  if (Claim()) FinishWith(call_.Encode(std::move(result), response_));
  Unref();
}

void ModelInferReactor::OnCancel() {
  cancel_->Cancel();
  if (Claim()) FinishWith(absl::CancelledError("the call was cancelled"));
}

void ModelInferReactor::OnDone() {
  call_.Report(call_.clock()->NowNs());
  Unref();
}

void ModelInferReactor::FinishWith(const absl::Status& status) {
  Finish(call_.FinalStatus(status, context_));
}

void ModelInferReactor::Unref() {
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
}

}  // namespace brigade::frontend
