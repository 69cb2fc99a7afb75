#ifndef BRIGADE_ROUTE_STEP_REQUEST_H_
#define BRIGADE_ROUTE_STEP_REQUEST_H_

// NewStepRequest: the request an ensemble step or a cascade variant sends for its parent
// request. It carries what the parent's client asked of the whole (id, parameters, priority,
// protocol, cancellation, deadline) to the model `model_name` at `model_version`, with its own
// arrival stamp; inputs, outputs and on_complete are the caller's to set. Pure.

#include <cstdint>
#include <memory>
#include <string>

#include "core/infer_request.h"

namespace brigade::route {

inline std::unique_ptr<InferRequest> NewStepRequest(const InferRequest& parent,
                                                    const std::string& model_name,
                                                    int64_t model_version, int64_t now_ns) {
  auto step = std::make_unique<InferRequest>();
  step->id = parent.id;
  step->model_name = model_name;
  step->model_version = model_version;
  step->parameters = parent.parameters;
  step->priority = parent.priority;
  step->protocol = parent.protocol;
  step->cancel = parent.cancel;
  step->deadline = parent.deadline;
  step->clock.Mark(Stage::kArrival, now_ns);
  return step;
}

}  // namespace brigade::route

#endif  // BRIGADE_ROUTE_STEP_REQUEST_H_
