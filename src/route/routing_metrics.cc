#include "route/routing_metrics.h"

#include <utility>
#include <vector>

#include "telemetry/prometheus_text.h"

namespace brigade::route {

void AppendRoutingMetrics(std::span<const RouterSample> routers, std::string* out) {
  if (routers.empty()) return;
  telemetry::PrometheusTextWriter writer(out);
  constexpr std::string_view kName = "brigade_route_decisions_total";
  writer.Family(kName, "Requests a router sent to each variant, by the reason it chose it",
                telemetry::MetricType::kCounter);
  for (const RouterSample& router : routers) {
    const std::string version = std::to_string(router.version);
    const auto counts = router.policy->Counts();
    for (size_t v = 0; v < counts.size(); ++v) {
      for (int r = 0; r < kNumRouteReasons; ++r) {
        const telemetry::LabelPair labels[] = {
            {"model", router.policy->router_name()},
            {"version", version},
            {"variant", router.policy->variants()[v].name},
            {"reason", RouteReasonName(static_cast<RouteReason>(r))}};
        writer.Sample(kName, labels, counts[v][r]);
      }
    }
  }
}

void AppendEnsembleBranchMetrics(std::span<const EnsembleSample> ensembles, std::string* out) {
  std::vector<std::pair<const EnsembleSample*, std::vector<Ensemble::BranchCount>>> counted;
  for (const EnsembleSample& sample : ensembles) {
    std::vector<Ensemble::BranchCount> counts = sample.ensemble->BranchCounts();
    if (!counts.empty()) counted.emplace_back(&sample, std::move(counts));
  }
  if (counted.empty()) return;
  telemetry::PrometheusTextWriter writer(out);
  constexpr std::string_view kName = "brigade_ensemble_branch_total";
  writer.Family(kName, "Requests an ensemble switch sent down each branch, by why",
                telemetry::MetricType::kCounter);
  for (const auto& [sample, counts] : counted) {
    const std::string version = std::to_string(sample->version);
    for (const Ensemble::BranchCount& count : counts) {
      for (const bool by_default : {false, true}) {
        const telemetry::LabelPair labels[] = {{"model", sample->ensemble->plan().name()},
                                               {"version", version},
                                               {"step", count.step},
                                               {"branch", count.branch},
                                               {"reason", by_default ? "default" : "value"}};
        writer.Sample(kName, labels, by_default ? count.by_default : count.matched);
      }
    }
  }
}

}  // namespace brigade::route
