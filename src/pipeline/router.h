#ifndef BRIGADE_PIPELINE_ROUTER_H_
#define BRIGADE_PIPELINE_ROUTER_H_

// Router: the pipeline stage that decides what serves a request: the model the request names
// and the version it asks for (the version policy's choice, the highest ready version, when it
// asks for none). When that model is a router (`platform: "brigade_router"`), its routing policy
// picks one of its variants (rules, weighted split, default; route/routing_policy.h), and the
// variant serves the request; a variant that is not ready is routed around (the default, then
// the others), counted as a fallback. A router with an `slo` section sends a request no rule
// routes to the most accurate variant its scheduler predicts to meet the deadline (the
// request's timeout, or now + the router's target p99), or the fastest, or refuses it
// (UNAVAILABLE) when the config says so. Everything after this stage works on the Route it returns.
//
// Thread safety: const and safe from any thread; one shared-lock lookup in the repository.
// Ownership: borrows the repository, which must outlive the router. The Route holds the served
// model and version alive for as long as the request keeps it.
// Failure: NOT_FOUND for an unknown model or version, UNAVAILABLE for one with nothing ready
// (messages name the model), UNAVAILABLE when none of a router's variants is ready.

#include <memory>

#include "absl/status/statusor.h"
#include "core/clock.h"
#include "core/infer_request.h"
#include "repository/model_repository.h"
#include "repository/served_model.h"

namespace brigade::pipeline {

struct Route {
  // What serves the request (for a router: the variant chosen).
  std::shared_ptr<const repository::ServedModel> model;
  std::shared_ptr<repository::ModelVersion> version;
  // The router the request named, when it named one; `variant` indexes its policy's variants.
  std::shared_ptr<repository::ModelVersion> router;
  int variant = -1;
};

class Router {
 public:
  // `clock` (borrowed) times SLO selection's deadlines.
  Router(const repository::ModelRepository* repository, const Clock* clock)
      : repository_(repository), clock_(clock) {}

  absl::StatusOr<Route> Resolve(const InferRequest& request) const;

 private:
  // SLO selection (RoutingPolicy::slo): each variant's predicted completion, then the choice.
  absl::StatusOr<route::RouteDecision> ChooseBySlo(const route::RoutingPolicy& policy,
                                                   const InferRequest& request) const;

  const repository::ModelRepository* const repository_;
  const Clock* const clock_;
};

}  // namespace brigade::pipeline

#endif  // BRIGADE_PIPELINE_ROUTER_H_
