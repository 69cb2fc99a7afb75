#include "core/infer_request.h"

#include <cassert>
#include <utility>

namespace brigade {

std::string_view ProtocolName(Protocol protocol) {
  switch (protocol) {
    case Protocol::kInProcess:
      return "inprocess";
    case Protocol::kHttp:
      return "http";
    case Protocol::kGrpc:
      return "grpc";
  }
  return "unknown";
}

InferRequest::~InferRequest() {
  // A request destroyed with its callback still armed was never answered: the client would hang.
  // Answer it rather than lose it, so release builds degrade to an error instead of a hang.
  if (on_complete != nullptr) {
    assert(false && "InferRequest destroyed without Complete()");
    Complete(absl::InternalError("request was dropped without an answer"));
  }
}

const InferInput* InferRequest::FindInput(std::string_view input_name) const {
  for (const InferInput& input : inputs) {
    if (input.name == input_name) return &input;
  }
  return nullptr;
}

void InferRequest::Complete(absl::StatusOr<InferResponse> result) {
  if (on_complete == nullptr) return;
  InferCallback callback = std::move(on_complete);
  on_complete = nullptr;
  callback(std::move(result));
}

}  // namespace brigade
