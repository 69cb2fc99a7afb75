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

TEST(RoutingMetricsTest, AnSloRoutersControllerIsTwoGauges) {
  config::ModelRouting slo_config;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(variant { name: "cnn" model_name: "big" accuracy: 0.9 }
           variant { name: "mlp" model_name: "small" accuracy: 0.8 }
           slo { target_p99_microseconds: 5000 })pb",
      &slo_config));
  auto slo = RoutingPolicy::Create("slo_router", slo_config);
  ASSERT_TRUE(slo.ok()) << slo.status();
  ASSERT_NE((*slo)->slo_controller(), nullptr);
  // One full window 4 ms over the 5 ms target: the margin drops by the excess.
  for (int i = 0; i < SloController::kWindowCapacity; ++i) {
    (*slo)->slo_controller()->Record(9'000'000, i);
  }
  config::ModelRouting plain_config;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(variant { name: "only" model_name: "m" })pb", &plain_config));
  auto plain = RoutingPolicy::Create("plain", plain_config);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ((*plain)->slo_controller(), nullptr);

  std::string text;
  const RouterSample routers[] = {{plain->get(), 1}, {slo->get(), 2}};
  AppendSloControllerMetrics(routers, &text);
  EXPECT_NE(text.find("# TYPE brigade_route_slo_margin_seconds gauge"), std::string::npos) << text;
  EXPECT_NE(
      text.find("brigade_route_slo_margin_seconds{model=\"slo_router\",version=\"2\"} -0.004"),
      std::string::npos)
      << text;
  EXPECT_NE(
      text.find("brigade_route_slo_window_p99_seconds{model=\"slo_router\",version=\"2\"} 0.009"),
      std::string::npos)
      << text;
  EXPECT_EQ(text.find("plain"), std::string::npos) << text;
  std::string none;
  const RouterSample plain_only[] = {{plain->get(), 1}};
  AppendSloControllerMetrics(plain_only, &none);
  EXPECT_TRUE(none.empty()) << none;
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
