#include "pipeline/router.h"

#include <utility>

#include "core/status_macros.h"

namespace brigade::pipeline {

absl::StatusOr<Route> Router::Resolve(const InferRequest& request) const {
  Route route;
  BRIGADE_ASSIGN_OR_RETURN(route.model, repository_->Find(request.model_name));
  BRIGADE_ASSIGN_OR_RETURN(route.version, route.model->Resolve(request.model_version));
  return route;
}

}  // namespace brigade::pipeline
