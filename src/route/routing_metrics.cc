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

void AppendSloControllerMetrics(std::span<const RouterSample> routers, std::string* out) {
  bool any = false;
  for (const RouterSample& router : routers) any |= router.policy->slo_controller() != nullptr;
  if (!any) return;
  telemetry::PrometheusTextWriter writer(out);
  constexpr std::string_view kMargin = "brigade_route_slo_margin_seconds";
  constexpr std::string_view kP99 = "brigade_route_slo_window_p99_seconds";
  writer.Family(kMargin,
                "What an SLO router adds to its target deadline, learned from the tail it delivers",
                telemetry::MetricType::kGauge);
  for (const RouterSample& router : routers) {
    const SloController* slo = router.policy->slo_controller();
    if (slo == nullptr) continue;
    const std::string version = std::to_string(router.version);
    const telemetry::LabelPair labels[] = {{"model", router.policy->router_name()},
                                           {"version", version}};
    writer.Sample(kMargin, labels, static_cast<double>(slo->MarginNs()) / 1e9);
  }
  writer.Family(kP99, "The p99 latency of an SLO router's answers over its last closed window",
                telemetry::MetricType::kGauge);
  for (const RouterSample& router : routers) {
    const SloController* slo = router.policy->slo_controller();
    if (slo == nullptr) continue;
    const std::string version = std::to_string(router.version);
    const telemetry::LabelPair labels[] = {{"model", router.policy->router_name()},
                                           {"version", version}};
    writer.Sample(kP99, labels, static_cast<double>(slo->LastWindowP99Ns()) / 1e9);
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
