#include "frontend/grpc/grpc_infer_reactor.h"

#include <optional>
#include <string_view>
#include <utility>

#include "core/strings.h"
#include "frontend/grpc/grpc_status.h"
#include "frontend/grpc/grpc_trace_context.h"
#include "protocol/grpc/infer_messages.h"
#include "protocol/header_forwarding.h"

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
                                            std::shared_ptr<const Parameters> forwarded,
                                            const protocol::SharedMemoryResolver* shared_memory,
                                            RequestCharging charging) {
  // gRPC's callback API owns reactors through raw pointers; this one deletes itself in Unref().
  auto* reactor = new ModelInferReactor(context, response, clock);
  reactor->forwarded_ = std::move(forwarded);
  reactor->Run(request, server, shared_memory, charging);
  return reactor;
}

void ModelInferReactor::Run(const ModelInferRequest* request, InferenceServer* server,
                            const protocol::SharedMemoryResolver* shared_memory,
                            const RequestCharging& charging) {
  const int64_t arrival_ns = clock_->NowNs();
  observer_ = server->observer();
  report_.model = request->model_name();
  report_.version = request->model_version();
  report_.id = request->id();
  parent_ = TraceContextFromMetadata(*context_);
  std::shared_ptr<ChargedInferRequest> shared =
      InferMessageAllocator::SharedRequest(context_, request);
  const absl::Status charged = ChargeRequest(charging, shared.get());
  absl::StatusOr<std::unique_ptr<InferRequest>> decoded =
      charged.ok() ? protocol::grpc::DecodeModelInferRequest(SharedMessage(std::move(shared)),
                                                             arrival_ns, shared_memory)
                   : absl::StatusOr<std::unique_ptr<InferRequest>>(charged);
  if (decoded.ok()) {
    absl::StatusOr<std::vector<protocol::SharedMemoryOutput>> bound =
        protocol::BindSharedMemoryOutputs(shared_memory, &(*decoded)->outputs);
    if (bound.ok()) {
      shared_outputs_ = *std::move(bound);
    } else {
      decoded = bound.status();
    }
  }
  const int64_t decoded_ns = clock_->NowNs();
  report_.clock.Mark(Stage::kArrival, arrival_ns);
  report_.clock.Mark(Stage::kDecoded, decoded_ns);
  if (!decoded.ok()) {
    if (Claim()) FinishWith(decoded.status());
    Unref();  // no completion will come
    return;
  }
  std::unique_ptr<InferRequest> infer = *std::move(decoded);
  if (forwarded_ != nullptr) protocol::HeaderForwarding::Merge(*forwarded_, &infer->parameters);
  infer->protocol = Protocol::kGrpc;
  infer->clock.Mark(Stage::kDecoded, decoded_ns);
  infer->cancel = cancel_;
  infer->deadline = Deadline::Earliest(
      infer->deadline,
      FromGrpcDeadline(context_->deadline(), std::chrono::system_clock::now(), arrival_ns));
  // The completion may run on this thread (early errors) or on an instance thread.
  infer->on_complete = [this](absl::StatusOr<InferResponse> result) {
    OnInferDone(std::move(result));
  };
  server->Infer(std::move(infer));
}

void ModelInferReactor::OnInferDone(absl::StatusOr<InferResponse> result) {
  if (Claim()) {
    if (!result.ok()) {
      FinishWith(result.status());
    } else {
      report_.TakeResponse(*result);
      absl::Status status = protocol::WriteSharedMemoryOutputs(shared_outputs_, *result);
      if (status.ok()) {
        status = protocol::grpc::EncodeModelInferResponse(*result, response_, shared_outputs_);
      }
      shared_outputs_.clear();  // the regions' mappings are no longer needed
      FinishWith(status);
    }
  }
  Unref();
}

void ModelInferReactor::OnCancel() {
  cancel_->Cancel();
  if (Claim()) FinishWith(absl::CancelledError("the call was cancelled"));
}

void ModelInferReactor::OnDone() {
  ReportRequestDone(observer_, &report_,
                    {.protocol = Protocol::kGrpc,
                     .protocol_code = grpc_code_,
                     .written = true,
                     .sent_ns = clock_->NowNs(),
                     .parent = &parent_});
  Unref();
}

void ModelInferReactor::FinishWith(const absl::Status& status) {
  report_.status = status;
  grpc::Status sent = FinishStatus(status, context_);
  grpc_code_ = static_cast<int>(sent.error_code());
  Finish(std::move(sent));
}

void ModelInferReactor::Unref() {
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
}

}  // namespace brigade::frontend
