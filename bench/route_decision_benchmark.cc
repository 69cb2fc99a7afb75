// What one routing decision costs (RoutingPolicy::Decide) for the shapes of policy a router
// config has: the first rule matching, every rule read and none matching, a sticky split on a
// string user id, and a non-sticky split. Printed, not asserted:
//   build/bench/route_decision_benchmark --benchmark_repetitions=5
//     --benchmark_report_aggregates_only=true   (one command line)
#include <string>

#include "benchmark/benchmark.h"
#include "google/protobuf/text_format.h"
#include "route/routing_policy.h"

namespace brigade::route {
namespace {

std::unique_ptr<RoutingPolicy> Make(const char* text) {
  config::ModelRouting config;
  if (!google::protobuf::TextFormat::ParseFromString(text, &config)) std::abort();
  auto policy = RoutingPolicy::Create("router", config);
  if (!policy.ok()) std::abort();
  return *std::move(policy);
}

constexpr const char* kRules = R"pb(
  variant { name: "fast" model_name: "small" }
  variant { name: "accurate" model_name: "big" }
  rule { parameter: "urgent" op: EQ value: "true" variant: "fast" }
  rule { parameter: "user_id" op: LT value: "1000" variant: "fast" }
  rule { parameter: "user_tier" op: EQ value: "free" variant: "fast" }
  default_variant: "accurate"
)pb";

// Parameters a request typically carries besides the one a rule reads.
Parameters Typical() {
  Parameters parameters;
  parameters.Set("timeout", int64_t{20000});
  parameters.Set("priority", int64_t{1});
  return parameters;
}

void BM_FirstRuleMatches(benchmark::State& state) {
  auto policy = Make(kRules);
  Parameters parameters = Typical();
  parameters.Set("urgent", true);
  for (auto _ : state) benchmark::DoNotOptimize(policy->Decide(parameters));
}
BENCHMARK(BM_FirstRuleMatches);

void BM_EveryRuleReadNoneMatches(benchmark::State& state) {
  auto policy = Make(kRules);
  Parameters parameters = Typical();
  parameters.Set("urgent", false);
  parameters.Set("user_id", int64_t{123456});
  parameters.Set("user_tier", std::string("gold"));
  for (auto _ : state) benchmark::DoNotOptimize(policy->Decide(parameters));
}
BENCHMARK(BM_EveryRuleReadNoneMatches);

void BM_StickySplitOnAStringUserId(benchmark::State& state) {
  auto policy = Make(R"pb(
    variant { model_name: "a" }
    variant { model_name: "b" }
    split { variant: "a" weight: 90 }
    split { variant: "b" weight: 10 }
    sticky_parameter: "user"
  )pb");
  Parameters parameters = Typical();
  parameters.Set("user", std::string("user-7f3a9c21"));
  for (auto _ : state) benchmark::DoNotOptimize(policy->Decide(parameters));
}
BENCHMARK(BM_StickySplitOnAStringUserId);

void BM_WeightedSplit(benchmark::State& state) {
  auto policy = Make(R"pb(
    variant { model_name: "a" }
    variant { model_name: "b" }
    split { variant: "a" weight: 90 }
    split { variant: "b" weight: 10 }
  )pb");
  Parameters parameters = Typical();
  for (auto _ : state) benchmark::DoNotOptimize(policy->Decide(parameters));
}
BENCHMARK(BM_WeightedSplit);

}  // namespace
}  // namespace brigade::route

BENCHMARK_MAIN();
