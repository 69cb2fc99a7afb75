#ifndef BRIGADE_FRONTEND_GRPC_GRPC_INFER_CALL_H_
#define BRIGADE_FRONTEND_GRPC_GRPC_INFER_CALL_H_

// InferCallState: what one unary ModelInfer call does whichever gRPC API carries it (the callback
// reactor, the completion-queue call, the synchronous handler): stamping t0, charging and decoding
// the request with the call's deadline and forwarded metadata, encoding the answer (shared-memory
// outputs included), turning the final status into gRPC's with its trailing metadata, and
// reporting the call to the server's RequestObserver once it is done. The three carriers differ
// only in how they learn of events and finish the call; keeping the rest here keeps the APIs'
// behaviour identical, which the tests check by running every case on each of them.
//
// Thread safety: none; the carrier guarantees one thread at a time (Decode before the request is
// handed on; Encode/FinalStatus by whoever claimed the call's answer; Report once, last).
// Ownership: the server, clock and shared-memory resolver passed in are borrowed and outlive
// every call (the GrpcServer shuts gRPC down before they go).

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/clock.h"
#include "core/infer_request.h"
#include "core/infer_response.h"
#include "frontend/grpc/grpc_request_charge.h"
#include "frontend/request_report.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/status.h"
#include "protocol/grpc_service.pb.h"
#include "protocol/shared_memory.h"
#include "server/inference_server.h"
#include "telemetry/trace_context.h"

namespace brigade::frontend {

class InferCallState {
 public:
  explicit InferCallState(const Clock* clock) : clock_(clock) {}

  // Charges and decodes `request` (shared so raw inputs can borrow its bytes), stamping t0 at
  // entry. The request carries `cancel`, the earlier of its `timeout` and the call's deadline,
  // and `forwarded`, the parameters the call's metadata forwards (grpc_header_forwarding.h; null:
  // none); its `on_complete` is the caller's to set. The error is what the call must finish with.
  absl::StatusOr<std::unique_ptr<InferRequest>> Decode(
      const grpc::ServerContextBase& context, std::shared_ptr<ChargedInferRequest> request,
      const std::shared_ptr<const Parameters>& forwarded, InferenceServer* server,
      const protocol::SharedMemoryResolver* shared_memory, const RequestCharging& charging,
      std::shared_ptr<CancelFlag> cancel);

  // The status the call ends with for `result`; on OK `response` holds the encoded answer.
  absl::Status Encode(absl::StatusOr<InferResponse> result,
                      inference::ModelInferResponse* response);

  // gRPC's status for `status` (trailing metadata added to `context`), remembered for Report.
  grpc::Status FinalStatus(const absl::Status& status, grpc::ServerContextBase* context);

  // Reports the call to the observer with `sent_ns` as t5. Once, after FinalStatus.
  void Report(int64_t sent_ns);

  const Clock* clock() const { return clock_; }

 private:
  const Clock* const clock_;
  // What the observer is told.
  RequestObserver* observer_ = nullptr;
  RequestReport report_;
  std::optional<telemetry::TraceContext> parent_;
  int grpc_code_ = 0;
  // Outputs placed in shared memory: bound in Decode, written and encoded in Encode.
  std::vector<protocol::SharedMemoryOutput> shared_outputs_;
};

}  // namespace brigade::frontend

#endif  // BRIGADE_FRONTEND_GRPC_GRPC_INFER_CALL_H_
