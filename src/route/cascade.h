#ifndef BRIGADE_ROUTE_CASCADE_H_
#define BRIGADE_ROUTE_CASCADE_H_

// Cascade: runs a router's confidence cascade (RoutingPolicy::cascade()). The request goes to
// the first variant (small and fast) through the StepRunner; when every row of its answer
// scores at least the threshold (top class probability, or top-1 minus top-2 margin, on the
// softmax of the output when it holds logits), that answer is the router's. Otherwise the same
// request (the same input tensors, no copy) goes to the second variant, whose answer is. Either
// way the answer names the router and carries `routed_to` ("model:version" of the variant that
// answered) and `cascade` ("accepted" or "escalated"); each decision is counted in the policy.
//
// A request is escalated whole when any of its rows is uncertain (rows are not split across
// the variants). When the first variant fails, the second is tried; when the scored output is
// missing or not FP32 [batch, classes], the request fails with INVALID_ARGUMENT naming it.
//
// Thread safety: Run() is safe from any thread and never blocks; answers arrive on the threads
// the variants answer on. Ownership: shared by the router's model version and its runs in
// flight; the policy is shared, the StepRunner and clock borrowed (they outlive every run).

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "core/clock.h"
#include "core/infer_request.h"
#include "core/tensor.h"
#include "route/ensemble.h"
#include "route/routing_policy.h"

namespace brigade::route {

class Cascade : public std::enable_shared_from_this<Cascade> {
 public:
  // `policy` must have a cascade().
  static std::shared_ptr<Cascade> Create(std::shared_ptr<const RoutingPolicy> policy,
                                         int64_t version, const Clock* clock);

  void Run(std::unique_ptr<InferRequest> request, StepRunner* runner) const;

  // The lowest score over the rows of `scores` (FP32, [batch, classes] or [classes]).
  // INVALID_ARGUMENT for another type or shape. Pure.
  static absl::StatusOr<double> LowestScore(const Tensor& scores,
                                            config::ModelRouting::Cascade::Score score,
                                            bool softmax);

  struct ConstructionTag {
   private:
    friend class Cascade;
    ConstructionTag() = default;
  };
  Cascade(ConstructionTag, std::shared_ptr<const RoutingPolicy> policy, int64_t version,
          const Clock* clock);

 private:
  friend class CascadeRun;

  const std::shared_ptr<const RoutingPolicy> policy_;
  const CascadeSpec spec_;
  const std::string version_;
  const Clock* const clock_;
};

}  // namespace brigade::route

#endif  // BRIGADE_ROUTE_CASCADE_H_
