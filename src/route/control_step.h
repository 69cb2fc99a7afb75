#ifndef BRIGADE_ROUTE_CONTROL_STEP_H_
#define BRIGADE_ROUTE_CONTROL_STEP_H_

// The steps of an ensemble that run in the server rather than on a model (Brigade's
// `switch` and `fusion` fields of ensemble_scheduling's steps), as pure functions:
//   - what a switch reads: a request parameter as text, or one value per request from a tensor
//     (its value, or the index of its highest score: a router model's output);
//   - what a fusion makes of the branches' tensors that exist: the one of them (SELECT), their
//     concatenation along an axis, their mean, or their weighted sum;
//   - the signature a fusion writes, from the signatures it reads, so a plan checks the readers
//     of a fusion's output like any other step's.
// A switch reads one value per row of a batch; the ensemble sends each row down the branch its
// value picks (route/ensemble.h).
//
// Thread safety: pure functions. Failure: INVALID_ARGUMENT naming the tensor, row or axis.

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/parameters.h"
#include "core/tensor.h"
#include "protocol/model_config.pb.h"
#include "route/ensemble_plan.h"

namespace brigade::route {

using FusionOp = config::ModelEnsembling::StepFusion::Op;

// The parameter `key` of `parameters` as a switch compares it: "true"/"false", integers (and
// integral doubles) in decimal, other doubles as StrCat writes them, strings as they are;
// nullopt when the request has no such parameter.
std::optional<std::string> SwitchParameterText(const Parameters& parameters, std::string_view key);

// The values a switch reads from `tensor` (named `name` in messages), one per row: with
// `argmax`, the index of the highest element of the row; otherwise the row's single element as
// text (BOOL, integers, integral FP32/FP64, BYTES). The first dimension is the batch when
// `batching`; otherwise the tensor is one row.
absl::StatusOr<std::vector<std::string>> SwitchTensorValues(const Tensor& tensor,
                                                            std::string_view name, bool argmax,
                                                            bool batching);

// Checks a fusion of `inputs` (in config order) and returns the signature of what it writes.
// `axis` is resolved (0 < axis < rank; the config's 0 means rank - 1); `weights` has one entry
// per input for WEIGHTED_SUM and none otherwise. The message names the input at fault.
absl::StatusOr<TensorSignature> FusionSignature(FusionOp op,
                                                std::span<const TensorSignature> inputs, int axis,
                                                std::span<const float> weights);

// Fuses the inputs that exist (`present`, in config order, with their `weights` for
// WEIGHTED_SUM). At least one must exist. `axis` is resolved (0 < axis < rank).
absl::StatusOr<Tensor> Fuse(FusionOp op, std::span<const Tensor> present, int axis,
                            std::span<const float> weights);

}  // namespace brigade::route

#endif  // BRIGADE_ROUTE_CONTROL_STEP_H_
