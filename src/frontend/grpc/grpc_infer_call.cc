#include "frontend/grpc/grpc_infer_call.h"

#include <chrono>
#include <utility>

#include "frontend/grpc/grpc_status.h"
#include "frontend/grpc/grpc_trace_context.h"
#include "protocol/grpc/infer_messages.h"
#include "protocol/header_forwarding.h"

namespace brigade::frontend {

absl::StatusOr<std::unique_ptr<InferRequest>> InferCallState::Decode(
    const grpc::ServerContextBase& context, std::shared_ptr<ChargedInferRequest> request,
    const std::shared_ptr<const Parameters>& forwarded, InferenceServer* server,
    const protocol::SharedMemoryResolver* shared_memory, const RequestCharging& charging,
    std::shared_ptr<CancelFlag> cancel) {
  const int64_t arrival_ns = clock_->NowNs();
  observer_ = server->observer();
  report_.model = request->message.model_name();
  report_.version = request->message.model_version();
  report_.id = request->message.id();
  parent_ = TraceContextFromMetadata(context);
  const absl::Status charged = ChargeRequest(charging, request.get());
  absl::StatusOr<std::unique_ptr<InferRequest>> decoded =
      charged.ok() ? protocol::grpc::DecodeModelInferRequest(SharedMessage(std::move(request)),
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
  if (!decoded.ok()) return decoded.status();
  std::unique_ptr<InferRequest>& infer = *decoded;
  if (forwarded != nullptr) protocol::HeaderForwarding::Merge(*forwarded, &infer->parameters);
  infer->protocol = Protocol::kGrpc;
  infer->clock.Mark(Stage::kDecoded, decoded_ns);
  infer->cancel = std::move(cancel);
  infer->deadline = Deadline::Earliest(
      infer->deadline,
      FromGrpcDeadline(context.deadline(), std::chrono::system_clock::now(), arrival_ns));
  return decoded;
}

absl::Status InferCallState::Encode(absl::StatusOr<InferResponse> result,
                                    inference::ModelInferResponse* response) {
  if (!result.ok()) return result.status();
  report_.TakeResponse(*result);
  absl::Status status = protocol::WriteSharedMemoryOutputs(shared_outputs_, *result);
  if (status.ok()) {
    status = protocol::grpc::EncodeModelInferResponse(*result, response, shared_outputs_);
  }
  shared_outputs_.clear();  // the regions' mappings are no longer needed
  return status;
}

grpc::Status InferCallState::FinalStatus(const absl::Status& status,
                                         grpc::ServerContextBase* context) {
  report_.status = status;
  grpc::Status sent = FinishStatus(status, context);
  grpc_code_ = static_cast<int>(sent.error_code());
  return sent;
}

void InferCallState::Report(int64_t sent_ns) {
  ReportRequestDone(observer_, &report_,
                    {.protocol = Protocol::kGrpc,
                     .protocol_code = grpc_code_,
                     .written = true,
                     .sent_ns = sent_ns,
                     .parent = &parent_});
}

}  // namespace brigade::frontend
