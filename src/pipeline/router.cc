#include "pipeline/router.h"

#include <array>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

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
  route::RouteDecision decision = policy.Decide(request.parameters);
  if (decision.reason == route::RouteReason::kSlo) {
    BRIGADE_ASSIGN_OR_RETURN(decision, ChooseBySlo(policy, request));
  }
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

absl::StatusOr<route::RouteDecision> Router::ChooseBySlo(const route::RoutingPolicy& policy,
                                                         const InferRequest& request) const {
  const route::SloSpec& slo = *policy.slo();
  const std::vector<route::RouteVariant>& variants = policy.variants();
  const int64_t now_ns = clock_->NowNs();
  const int64_t deadline_ns = request.deadline.infinite()
                                  ? Deadline::AfterUs(now_ns, slo.target_p99_us).ns()
                                  : request.deadline.ns();
  // A fixed array (routers name at most kMaxRouteVariants): nothing allocated per request.
  std::array<int64_t, route::kMaxRouteVariants> predicted;
  predicted.fill(INT64_MAX);
  for (size_t v = 0; v < variants.size() && v < predicted.size(); ++v) {
    absl::StatusOr<std::shared_ptr<const repository::ServedModel>> model =
        repository_->Find(variants[v].model_name);
    if (!model.ok()) continue;
    absl::StatusOr<std::shared_ptr<repository::ModelVersion>> version =
        (*model)->Resolve(variants[v].model_version);
    if (!version.ok()) continue;
    int rows = 1;
    if ((*version)->max_batch_size() > 0 && !request.inputs.empty() &&
        !request.inputs[0].tensor.shape().empty()) {
      rows = static_cast<int>(request.inputs[0].tensor.shape()[0]);
    }
    predicted[v] = (*version)->PredictCompletionNs(rows);
  }
  const route::RouteDecision decision = route::ChooseBySlo(
      slo, std::span<const int64_t>(predicted.data(), variants.size()), deadline_ns);
  if (decision.variant < 0) {
    return absl::UnavailableError(StrCat("router '", policy.router_name(),
                                         "': no variant is predicted to answer within ",
                                         (deadline_ns - now_ns) / 1000, " us; retry later"));
  }
  return decision;
}

}  // namespace brigade::pipeline
