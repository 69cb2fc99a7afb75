#include "frontend/grpc/grpc_request_charge.h"

#include "core/strings.h"

namespace brigade::frontend {

absl::Status ChargeRequest(const RequestCharging& charging, ChargedInferRequest* request) {
  if (charging.budget == nullptr) return absl::OkStatus();
  const size_t bytes = request->message.ByteSizeLong();
  request->charge = charging.budget->TryCharge(bytes);
  if (request->charge) return absl::OkStatus();
  if (charging.refusals != nullptr) charging.refusals->Add();
  return absl::UnavailableError(
      StrCat("the server is holding its limit of request memory (", charging.budget->limit(),
             " bytes, --max-inflight-bytes) and cannot take this request's ", bytes,
             " bytes now; retry later"));
}

}  // namespace brigade::frontend
