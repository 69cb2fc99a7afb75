#include "route/routing_policy.h"

#include <map>
#include <string>
#include <vector>

#include "core/strings.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace brigade::route {
namespace {

config::ModelRouting Parse(std::string_view text) {
  config::ModelRouting routing;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(std::string(text), &routing)) << text;
  return routing;
}

std::unique_ptr<RoutingPolicy> Make(std::string_view text) {
  absl::StatusOr<std::unique_ptr<RoutingPolicy>> policy = RoutingPolicy::Create("r", Parse(text));
  EXPECT_TRUE(policy.ok()) << policy.status();
  return policy.ok() ? *std::move(policy) : nullptr;
}

std::string Error(std::string_view text) {
  absl::StatusOr<std::unique_ptr<RoutingPolicy>> policy = RoutingPolicy::Create("r", Parse(text));
  EXPECT_FALSE(policy.ok());
  return policy.ok() ? "" : std::string(policy.status().message());
}

// The issue's example: urgent requests and new users to the small variant, the rest to the
// accurate one.
constexpr std::string_view kTiers = R"pb(
  variant { name: "fast" model_name: "mnist_small" }
  variant { name: "accurate" model_name: "mnist_cnn" model_version: 2 }
  rule { parameter: "urgent" op: EQ value: "true" variant: "fast" }
  rule { parameter: "user_id" op: LT value: "1000" variant: "fast" }
  rule { parameter: "user_tier" op: EQ value: "free" variant: "fast" }
  default_variant: "accurate"
)pb";

std::string Route(const RoutingPolicy& policy, const Parameters& parameters) {
  const RouteDecision decision = policy.Decide(parameters);
  return StrCat(policy.variants()[decision.variant].name, "/", RouteReasonName(decision.reason));
}

TEST(RoutingPolicyTest, TheFirstMatchingRuleDecidesElseTheDefault) {
  auto policy = Make(kTiers);
  ASSERT_NE(policy, nullptr);
  EXPECT_EQ(policy->variants()[1].model_version, 2);
  EXPECT_EQ(policy->variants()[0].model_version, -1);
  Parameters none;
  EXPECT_EQ(Route(*policy, none), "accurate/default");
  Parameters urgent;
  urgent.Set("urgent", true);
  EXPECT_EQ(Route(*policy, urgent), "fast/rule");
  Parameters calm;
  calm.Set("urgent", false);
  EXPECT_EQ(Route(*policy, calm), "accurate/default");
  Parameters new_user;
  new_user.Set("user_id", int64_t{17});
  EXPECT_EQ(Route(*policy, new_user), "fast/rule");
  Parameters old_user;
  old_user.Set("user_id", int64_t{123456});
  EXPECT_EQ(Route(*policy, old_user), "accurate/default");
  // A number sent as text compares as a number; a string tier compares as text.
  Parameters text_id;
  text_id.Set("user_id", std::string("999"));
  EXPECT_EQ(Route(*policy, text_id), "fast/rule");
  Parameters free_tier;
  free_tier.Set("user_tier", std::string("free"));
  EXPECT_EQ(Route(*policy, free_tier), "fast/rule");
  Parameters gold_tier;
  gold_tier.Set("user_tier", std::string("gold"));
  EXPECT_EQ(Route(*policy, gold_tier), "accurate/default");
  // A value of the wrong kind never matches: a string for "urgent" is not true.
  Parameters odd;
  odd.Set("urgent", std::string("yes"));
  EXPECT_EQ(Route(*policy, odd), "accurate/default");
}

TEST(RoutingPolicyTest, EveryComparisonAndPresence) {
  auto policy = Make(R"pb(
    variant { model_name: "a" }
    variant { model_name: "b" }
    rule { parameter: "x" op: GE value: "10.5" variant: "b" }
    rule { parameter: "y" op: NE value: "blue" variant: "b" }
    rule { parameter: "z" op: PRESENT variant: "b" }
    rule { parameter: "w" op: LE value: "-1" variant: "b" }
    rule { parameter: "v" op: GT value: "3" variant: "b" }
  )pb");
  ASSERT_NE(policy, nullptr);
  auto route = [&](std::string key, ParameterValue value) {
    Parameters parameters;
    parameters.Set(std::move(key), std::move(value));
    return Route(*policy, parameters);
  };
  EXPECT_EQ(route("x", 10.5), "b/rule");
  EXPECT_EQ(route("x", 10.4), "a/default");
  EXPECT_EQ(route("x", uint64_t{11}), "b/rule");
  EXPECT_EQ(route("y", std::string("red")), "b/rule");
  EXPECT_EQ(route("y", std::string("blue")), "a/default");
  EXPECT_EQ(route("z", false), "b/rule");
  EXPECT_EQ(route("w", int64_t{-1}), "b/rule");
  EXPECT_EQ(route("w", int64_t{0}), "a/default");
  EXPECT_EQ(route("v", std::string("abc")), "a/default");
}

TEST(RoutingPolicyTest, AStickySplitKeepsEachUserOnOneVariantAndHoldsTheWeights) {
  auto policy = Make(R"pb(
    variant { model_name: "a" }
    variant { model_name: "b" }
    split { variant: "a" weight: 90 }
    split { variant: "b" weight: 10 }
    sticky_parameter: "user_id"
  )pb");
  ASSERT_NE(policy, nullptr);
  std::map<std::string, int> share;
  for (int64_t user = 0; user < 20000; ++user) {
    Parameters parameters;
    parameters.Set("user_id", user);
    const std::string first = Route(*policy, parameters);
    // The same user, again and as text: the same variant.
    EXPECT_EQ(Route(*policy, parameters), first);
    Parameters as_text;
    as_text.Set("user_id", std::to_string(user));
    EXPECT_EQ(Route(*policy, as_text), first);
    ++share[first];
  }
  // 90/10 within two points over 20000 users.
  EXPECT_NEAR(share["a/split"], 18000, 400);
  EXPECT_NEAR(share["b/split"], 2000, 400);
}

TEST(RoutingPolicyTest, ANonStickySplitSpreadsByWeight) {
  auto policy = Make(R"pb(
    variant { model_name: "a" }
    variant { model_name: "b" }
    variant { model_name: "c" }
    split { variant: "a" weight: 1 }
    split { variant: "b" weight: 3 }
  )pb");
  ASSERT_NE(policy, nullptr);
  std::map<std::string, int> share;
  Parameters none;
  for (int i = 0; i < 8000; ++i) ++share[Route(*policy, none)];
  EXPECT_NEAR(share["a/split"], 2000, 250);
  EXPECT_NEAR(share["b/split"], 6000, 250);
  EXPECT_EQ(share.count("c/split"), 0u);
}

TEST(RoutingPolicyTest, RulesComeBeforeTheSplit) {
  auto policy = Make(R"pb(
    variant { model_name: "a" }
    variant { model_name: "b" }
    rule { parameter: "urgent" value: "true" variant: "a" }
    split { variant: "b" weight: 1 }
  )pb");
  Parameters urgent;
  urgent.Set("urgent", true);
  EXPECT_EQ(Route(*policy, urgent), "a/rule");
  EXPECT_EQ(Route(*policy, Parameters()), "b/split");
}

TEST(RoutingPolicyTest, CountsAreKeptPerVariantAndReason) {
  auto policy = Make(kTiers);
  policy->Count(0, RouteReason::kRule);
  policy->Count(0, RouteReason::kRule);
  policy->Count(1, RouteReason::kFallback);
  auto counts = policy->Counts();
  ASSERT_EQ(counts.size(), 2u);
  EXPECT_EQ(counts[0][static_cast<int>(RouteReason::kRule)], 2u);
  EXPECT_EQ(counts[1][static_cast<int>(RouteReason::kFallback)], 1u);
  EXPECT_EQ(counts[1][static_cast<int>(RouteReason::kDefault)], 0u);
}

TEST(RoutingPolicyTest, BadConfigsAreRefusedNamingTheRuleOrVariant) {
  EXPECT_EQ(Error(""), "router 'r': routing names no variant");
  EXPECT_EQ(Error(R"pb(variant { model_name: "a" }
                       rule { parameter: "urgent" value: "true" variant: "small" })pb"),
            "router 'r': rule 1 names variant 'small', which is not one of the router's "
            "variants");
  EXPECT_EQ(Error(R"pb(variant { model_name: "a" }
                       rule { parameter: "user_id" op: LT value: "many" variant: "a" })pb"),
            "router 'r': rule 1 compares 'user_id' with 'many', which is not a number");
  EXPECT_EQ(Error(R"pb(variant { model_name: "a" }
                       variant { name: "a" model_name: "b" })pb"),
            "router 'r': two variants are called 'a'");
  EXPECT_EQ(Error(R"pb(variant { model_name: "a" }
                       split { variant: "a" })pb"),
            "router 'r': split 1 has no weight");
  EXPECT_EQ(Error(R"pb(variant { model_name: "a" }
                       default_variant: "z")pb"),
            "router 'r': default_variant names variant 'z', which is not one of the router's "
            "variants");
  EXPECT_EQ(Error(R"pb(variant { model_name: "r" })pb"),
            "router 'r': a variant cannot be the router itself");
  EXPECT_EQ(Error(R"pb(variant { model_name: "a" }
                       sticky_parameter: "user")pb"),
            "router 'r': sticky_parameter is set but there is no split");
}

constexpr std::string_view kSloTiers = R"pb(
  variant { name: "small" model_name: "mnist_small" accuracy: 0.888 }
  variant { name: "cnn" model_name: "mnist_cnn" accuracy: 0.919 }
  variant { name: "mid" model_name: "mnist_mid" accuracy: 0.90 }
  rule { parameter: "urgent" op: EQ value: "true" variant: "small" }
  slo { target_p99_microseconds: 5000 }
)pb";

TEST(RoutingPolicyTest, SloSelectionComesAfterTheRulesAndOrdersVariantsByAccuracy) {
  std::unique_ptr<RoutingPolicy> policy = Make(kSloTiers);
  ASSERT_NE(policy, nullptr);
  ASSERT_TRUE(policy->slo().has_value());
  EXPECT_EQ(policy->slo()->target_p99_us, 5000);
  EXPECT_EQ(policy->slo()->by_accuracy, (std::vector<int>{1, 2, 0}));
  Parameters urgent;
  urgent.Set("urgent", true);
  EXPECT_EQ(policy->Decide(urgent).reason, RouteReason::kRule);
  EXPECT_EQ(policy->Decide(Parameters{}).reason, RouteReason::kSlo);
}

TEST(RoutingPolicyTest, ChooseBySloTakesTheMostAccurateInTimeElseTheFastest) {
  SloSpec spec;
  spec.by_accuracy = {1, 2, 0};  // cnn, mid, small
  const int64_t deadline = 10'000;
  auto choose = [&](std::vector<int64_t> predicted) {
    return ChooseBySlo(spec, predicted, deadline);
  };
  RouteDecision d = choose({9'000, 8'000, 9'500});  // everyone in time: the most accurate
  EXPECT_EQ(d.variant, 1);
  EXPECT_EQ(d.reason, RouteReason::kSlo);
  d = choose({9'000, 12'000, 9'500});  // cnn late: mid
  EXPECT_EQ(d.variant, 2);
  d = choose({9'000, 12'000, 11'000});  // only small in time
  EXPECT_EQ(d.variant, 0);
  d = choose({13'000, 12'000, 11'000});  // none in time: the earliest
  EXPECT_EQ(d.variant, 2);
  EXPECT_EQ(d.reason, RouteReason::kSloFastest);
  d = choose({9'000, -1, 11'000});  // no profile yet: taken as in time
  EXPECT_EQ(d.variant, 1);
  d = choose({9'000, INT64_MAX, 12'000});  // cnn not available, mid late: small
  EXPECT_EQ(d.variant, 0);
  spec.reject_when_late = true;
  d = choose({13'000, 12'000, 11'000});
  EXPECT_EQ(d.variant, -1);
  d = choose({INT64_MAX, INT64_MAX, INT64_MAX});
  EXPECT_EQ(d.variant, -1);
}

TEST(RoutingPolicyTest, SloSelectionRefusesSplitsCascadesAndNoTarget) {
  EXPECT_EQ(Error(R"pb(variant { model_name: "a" }
                       split { variant: "a" weight: 1 }
                       slo { target_p99_microseconds: 10 })pb"),
            "router 'r': slo selection replaces the split and the default: remove its splits "
            "and cascade");
  EXPECT_EQ(Error(R"pb(variant { model_name: "a" }
                       slo {})pb"),
            "router 'r': slo.target_p99_microseconds 0 is not between 1 and 3600000000");
  EXPECT_EQ(Error(R"pb(variant { model_name: "a" accuracy: nan })pb"),
            "router 'r': variant 'a' has accuracy nan");
}

}  // namespace
}  // namespace brigade::route
