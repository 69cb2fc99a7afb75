#ifndef BRIGADE_ROUTE_ROUTING_METRICS_H_
#define BRIGADE_ROUTE_ROUTING_METRICS_H_

// AppendRoutingMetrics: every router's decisions as a Prometheus counter family,
//
//   brigade_route_decisions_total{model="<router>",version="<v>",variant="<name>",
//                                 reason="rule|split|default|fallback"}
//
// one series per variant and reason, so a dashboard shows each variant's share of traffic and
// why it got it (a rising `fallback` count means a variant is missing).
// Pure; reads the policies' (the ensembles') atomic counters.

#include <cstdint>
#include <span>
#include <string>

#include "route/ensemble.h"
#include "route/routing_policy.h"

namespace brigade::route {

struct RouterSample {
  // Borrowed for the call.
  const RoutingPolicy* policy = nullptr;
  int64_t version = 1;
};

void AppendRoutingMetrics(std::span<const RouterSample> routers, std::string* out);

// AppendEnsembleBranchMetrics: every ensemble switch's decisions,
//
//   brigade_ensemble_branch_total{model="<ensemble>",version="<v>",step="<switch>",
//                                 branch="<name>",reason="value|default"}
//
// one series per branch and reason (`value`: a branch listed the value; `default`: the
// parameter was missing or no branch listed it). Ensembles without a switch add nothing.
struct EnsembleSample {
  // Borrowed for the call.
  const Ensemble* ensemble = nullptr;
  int64_t version = 1;
};

void AppendEnsembleBranchMetrics(std::span<const EnsembleSample> ensembles, std::string* out);

}  // namespace brigade::route

#endif  // BRIGADE_ROUTE_ROUTING_METRICS_H_
