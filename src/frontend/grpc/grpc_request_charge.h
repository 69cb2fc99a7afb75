#ifndef BRIGADE_FRONTEND_GRPC_GRPC_REQUEST_CHARGE_H_
#define BRIGADE_FRONTEND_GRPC_GRPC_REQUEST_CHARGE_H_

// A ModelInfer request message together with the memory-budget charge (core/memory_budget.h)
// that covers it. The codec's raw input tensors share ownership of the message, so the bytes a
// request holds are released only when the last tensor borrowing them is gone; keeping the charge
// in the same allocation makes it go back at exactly that moment, without a second allocation.
//
// Thread safety: ChargeRequest is safe from any thread on distinct requests. Ownership: a
// RequestCharging borrows its budget and counter, which outlive the gRPC server.

#include <memory>

#include "absl/status/status.h"
#include "core/memory_budget.h"
#include "protocol/grpc_service.pb.h"
#include "telemetry/counter.h"

namespace brigade::frontend {

struct ChargedInferRequest {
  inference::ModelInferRequest message;
  MemoryBudget::Charge charge;
};

// Where request messages are charged; a null budget: they are not (each is bounded only by
// gRPC's maximum message size).
struct RequestCharging {
  MemoryBudget* budget = nullptr;
  // Counts messages the budget refused; may be null.
  telemetry::Counter* refusals = nullptr;
};

// Charges `request`'s message (its serialized size, what gRPC read for it) to the budget and
// keeps the charge in `request`; UNAVAILABLE (counted) when the budget is full.
absl::Status ChargeRequest(const RequestCharging& charging, ChargedInferRequest* request);

// `request`'s message in shared ownership with the request (and its charge).
inline std::shared_ptr<const inference::ModelInferRequest> SharedMessage(
    std::shared_ptr<ChargedInferRequest> request) {
  inference::ModelInferRequest* message = &request->message;
  return std::shared_ptr<const inference::ModelInferRequest>(std::move(request), message);
}

}  // namespace brigade::frontend

#endif  // BRIGADE_FRONTEND_GRPC_GRPC_REQUEST_CHARGE_H_
