#include "route/routing_metrics.h"

#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace brigade::route {
namespace {

TEST(RoutingMetricsTest, EachVariantAndReasonIsOneCounterSeries) {
  config::ModelRouting config;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(variant { name: "fast" model_name: "small" }
           variant { model_name: "big" })pb",
      &config));
  auto policy = RoutingPolicy::Create("router", config);
  ASSERT_TRUE(policy.ok()) << policy.status();
  (*policy)->Count(0, RouteReason::kRule);
  (*policy)->Count(0, RouteReason::kRule);
  (*policy)->Count(1, RouteReason::kFallback);
  std::string text;
  const RouterSample routers[] = {{policy->get(), 3}};
  AppendRoutingMetrics(routers, &text);
  EXPECT_NE(text.find("# TYPE brigade_route_decisions_total counter"), std::string::npos) << text;
  EXPECT_NE(text.find("brigade_route_decisions_total{model=\"router\",version=\"3\","
                      "variant=\"fast\",reason=\"rule\"} 2"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("variant=\"big\",reason=\"fallback\"} 1"), std::string::npos) << text;
  EXPECT_NE(text.find("variant=\"big\",reason=\"split\"} 0"), std::string::npos) << text;
  std::string none;
  AppendRoutingMetrics({}, &none);
  EXPECT_TRUE(none.empty());
}

TEST(RoutingMetricsTest, EachSwitchBranchAndReasonIsOneCounterSeries) {
  config::ModelConfig config;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(name: "tiered"
           platform: "ensemble"
           input {
             name: "IN"
             data_type: TYPE_FP32
             dims: [ 1 ]
           }
           output {
             name: "OUT"
             data_type: TYPE_FP32
             dims: [ 1 ]
           }
           ensemble_scheduling {
             step {
               name: "by_tier"
               switch {
                 parameter: "tier"
                 branch { name: "fast" value: "free" step: "fast" }
                 default_branch: "fast"
               }
             }
             step {
               name: "fast"
               model_name: "m"
               input_map { key: "X" value: "IN" }
               output_map { key: "Y" value: "y" }
             }
             step {
               fusion {
                 op: SELECT
                 input: [ "y" ]
                 output: "OUT"
               }
             }
           })pb",
      &config));
  auto plan = EnsemblePlan::Create(config, [](std::string_view, int64_t) {
    return absl::StatusOr<StepModelSignature>(StepModelSignature{
        0, {{"X", DataType::kFp32, {1}, false}}, {{"Y", DataType::kFp32, {1}, false}}});
  });
  ASSERT_TRUE(plan.ok()) << plan.status();
  FakeClock clock;
  auto ensemble = Ensemble::Create(*std::move(plan), 2, &clock);
  std::string text;
  const EnsembleSample ensembles[] = {{ensemble.get(), 2}};
  AppendEnsembleBranchMetrics(ensembles, &text);
  EXPECT_NE(text.find("# TYPE brigade_ensemble_branch_total counter"), std::string::npos) << text;
  EXPECT_NE(text.find("brigade_ensemble_branch_total{model=\"tiered\",version=\"2\","
                      "step=\"by_tier\",branch=\"fast\",reason=\"default\"} 0"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace brigade::route
