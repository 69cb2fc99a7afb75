#ifndef BRIGADE_PIPELINE_REQUEST_VALIDATOR_H_
#define BRIGADE_PIPELINE_REQUEST_VALIDATOR_H_

// Checks an inference request against the model version it is for and brings it into the form
// the scheduler and backend expect. This is the last place a malformed request is caught, so
// everything downstream may assume:
//   - exactly the model's inputs are present, each once, in signature order; an optional input
//     (config `optional: true`) the request omitted is there with an empty Tensor, and a batching
//     request gives at least one input (its rows);
//   - each has the declared datatype and a concrete shape matching the declared dims, with
//     dimension 0 (when the model batches) between 1 and max_batch_size and equal across inputs;
//   - inputs with a config `reshape` carry the model-side shape (a view; no bytes are copied);
//   - every requested output exists, once.
// Messages name the model and the input/output at fault, e.g.
//   "model 'fashion_mnist' input 'image': expected shape [-1,1,28,28], got [1,784]".
// Pure; thread-safe.

#include "absl/status/status.h"
#include "core/infer_request.h"
#include "repository/model_version.h"

namespace brigade::pipeline {

absl::Status PrepareRequest(const repository::ModelVersion& model, InferRequest* request);

}  // namespace brigade::pipeline

#endif  // BRIGADE_PIPELINE_REQUEST_VALIDATOR_H_
