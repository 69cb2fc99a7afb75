#include "route/routing_metrics.h"

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

}  // namespace brigade::route
