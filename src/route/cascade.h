#ifndef BRIGADE_ROUTE_CASCADE_H_
#define BRIGADE_ROUTE_CASCADE_H_

// Cascade: runs a router's confidence cascade (RoutingPolicy::cascade()). The request goes to
// the first variant (small and fast) through the StepRunner, and each row of its answer is
// scored (top class probability, or top-1 minus top-2 margin, on the softmax of the output when
// it holds logits). A row scoring at least the threshold is certain and keeps the first
// variant's answer; the uncertain rows go to the second variant:
//   - every row certain: the first variant's answer is the router's (no second call, no copy);
//   - every row uncertain: the request itself (the same input tensors, no copy) goes to the
//     second variant, whose answer is the router's;
//   - some rows uncertain: those rows, gathered along dimension 0 of every input in their
//     order, go to the second variant as one request, and its answer rows are put back in
//     place of the first variant's, so the client gets one answer with its batch in order and
//     every output of a row from one variant. The second variant's outputs must match the
//     first's per row (datatype, shape after dimension 0), else INVALID_ARGUMENT naming the
//     output and both variants.
// Rows are split only when the router batches (max_batch_size > 0), every input has the same
// dimension 0, and the scored output and every output answered have one row per input row;
// otherwise any uncertain row escalates the whole request, as a router without batching does.
// The answer names the router and carries `routed_to` ("model:version" of the variant that
// answered; "first,second" when both did), `cascade` ("accepted", "escalated" or "partial") and
// `cascade_escalated_rows` (the rows the second variant answered). The policy counts one
// decision per request: kCascadeAccepted on the first variant, kCascadeEscalated or
// kCascadePartial on the second.
//
// When the first variant fails, the whole request goes to the second. When the scored output is
// missing or not FP32 [batch, classes], the request fails with INVALID_ARGUMENT naming it. A
// request cancelled before the second variant would run is answered CANCELLED; the second
// variant's failure fails the request, naming that variant.
//
// Thread safety: Run() is safe from any thread and never blocks; answers arrive on the threads
// the variants answer on. Ownership: shared by the router's model version and its runs in
// flight; the policy is shared, the StepRunner and clock borrowed (they outlive every run).

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/clock.h"
#include "core/infer_request.h"
#include "core/tensor.h"
#include "route/ensemble.h"
#include "route/routing_policy.h"

namespace brigade::route {

class Cascade : public std::enable_shared_from_this<Cascade> {
 public:
  // `policy` must have a cascade(). `batching`: the router's max_batch_size is above 0, so
  // dimension 0 of its inputs is the batch and rows may be split between the variants.
  static std::shared_ptr<Cascade> Create(std::shared_ptr<const RoutingPolicy> policy,
                                         int64_t version, bool batching, const Clock* clock);

  void Run(std::unique_ptr<InferRequest> request, StepRunner* runner) const;

  // The score of each row of `scores` (FP32, [batch, classes], or [classes]: one row); a NaN
  // score is 0 (no confidence at all). INVALID_ARGUMENT for another type or shape. Pure.
  static absl::StatusOr<std::vector<double>> RowScores(const Tensor& scores,
                                                       config::ModelRouting::Cascade::Score score,
                                                       bool softmax);
  // The lowest of RowScores(). Pure.
  static absl::StatusOr<double> LowestScore(const Tensor& scores,
                                            config::ModelRouting::Cascade::Score score,
                                            bool softmax);

  struct ConstructionTag {
   private:
    friend class Cascade;
    ConstructionTag() = default;
  };
  Cascade(ConstructionTag, std::shared_ptr<const RoutingPolicy> policy, int64_t version,
          bool batching, const Clock* clock);

 private:
  friend class CascadeRun;

  const std::shared_ptr<const RoutingPolicy> policy_;
  const CascadeSpec spec_;
  const std::string version_;
  const bool batching_;
  const Clock* const clock_;
};

}  // namespace brigade::route

#endif  // BRIGADE_ROUTE_CASCADE_H_
