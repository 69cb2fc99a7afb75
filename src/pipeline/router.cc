#include "pipeline/router.h"

#include <utility>

#include "core/status_macros.h"
#include "core/strings.h"

namespace brigade::pipeline {

absl::StatusOr<Route> Router::Resolve(const InferRequest& request) const {
  Route route;
  BRIGADE_ASSIGN_OR_RETURN(route.model, repository_->Find(request.model_name));
  BRIGADE_ASSIGN_OR_RETURN(route.version, route.model->Resolve(request.model_version));
  if (route.version->routing() == nullptr) return route;

  // A router: its policy names the variant, which is then resolved like any model. A variant
  // that is not ready is routed around: the default, then the others in config order.
  const route::RoutingPolicy& policy = *route.version->routing();
  // A cascade runs on the router itself (it picks its variant after the first one answers).
  if (policy.cascade().has_value()) return route;
  const route::RouteDecision decision = policy.Decide(request.parameters);
  const std::vector<route::RouteVariant>& variants = policy.variants();
  absl::Status first_error;
  auto try_variant = [&](int index, route::RouteReason reason) -> bool {
    const route::RouteVariant& variant = variants[index];
    absl::StatusOr<std::shared_ptr<const repository::ServedModel>> model =
        repository_->Find(variant.model_name);
    absl::StatusOr<std::shared_ptr<repository::ModelVersion>> version =
        model.ok() ? (*model)->Resolve(variant.model_version)
                   : absl::StatusOr<std::shared_ptr<repository::ModelVersion>>(model.status());
    if (!version.ok()) {
      if (first_error.ok()) first_error = version.status();
      return false;
    }
    policy.Count(index, reason);
    route.router = std::move(route.version);
    route.model = *std::move(model);
    route.version = *std::move(version);
    route.variant = index;
    return true;
  };
  if (try_variant(decision.variant, decision.reason)) return route;
  if (decision.variant != policy.default_variant() &&
      try_variant(policy.default_variant(), route::RouteReason::kFallback)) {
    return route;
  }
  for (int index = 0; index < static_cast<int>(variants.size()); ++index) {
    if (index == decision.variant || index == policy.default_variant()) continue;
    if (try_variant(index, route::RouteReason::kFallback)) return route;
  }
  return absl::UnavailableError(
      StrCat("router '", policy.router_name(), "': no variant is ready (variant '",
             variants[decision.variant].name, "': ", first_error.message(), ")"));
}

}  // namespace brigade::pipeline
