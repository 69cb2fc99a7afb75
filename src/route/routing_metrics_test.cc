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

}  // namespace
}  // namespace brigade::route
