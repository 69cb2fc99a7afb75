#include "tools/analyze/sweep_space.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::analyze {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

BatchingPolicy Policy(std::string_view text) {
  absl::StatusOr<BatchingPolicy> policy = ParseBatchingPolicy(text);
  EXPECT_TRUE(policy.ok()) << policy.status();
  return policy.ok() ? *policy : BatchingPolicy{};
}

std::vector<std::string> Labels(const SweepPlan& plan) {
  std::vector<std::string> labels;
  for (const ServingConfig& config : plan.configs) {
    labels.push_back(std::to_string(config.variant) + " " + config.Label());
  }
  return labels;
}

TEST(BatchingPolicyTest, ParsesEveryFormAndLabelsRoundTrip) {
  for (std::string_view text :
       {"none", "delay:0", "delay:200", "p99:5000", "formula", "formula:8000"}) {
    EXPECT_EQ(Policy(text).Label(), text);
  }
  EXPECT_EQ(Policy("delay:200").kind, BatchingKind::kFixedDelay);
  EXPECT_EQ(Policy("delay:200").delay_us, 200);
  EXPECT_EQ(Policy("p99:5000").kind, BatchingKind::kP99Model);
  EXPECT_EQ(Policy("p99:5000").target_p99_us, 5000);
  EXPECT_EQ(Policy("formula").kind, BatchingKind::kQueueFormula);
  EXPECT_EQ(Policy("formula").target_p99_us, 0);
}

TEST(BatchingPolicyTest, RefusesMalformedPolicies) {
  for (std::string_view text : {"", "delay", "delay:", "delay:-5", "delay:1ms", "p99", "p99:0",
                                "none:3", "adaptive", "formula:x"}) {
    absl::StatusOr<BatchingPolicy> policy = ParseBatchingPolicy(text);
    EXPECT_FALSE(policy.ok()) << text;
    if (!policy.ok()) {
      EXPECT_THAT(policy.status().message(), HasSubstr("batching policy"));
    }
  }
}

SweepSpace TwoVariantSpace() {
  SweepSpace space;
  space.variants = {{.name = "big", .model_dir = "/m/big", .base_max_batch_size = 32},
                    {.name = "small", .model_dir = "/m/small", .base_max_batch_size = 32}};
  space.max_batch_sizes = {1, 8};
  space.policies = {Policy("delay:100"), Policy("p99:4000")};
  space.instance_counts = {1};
  space.threads = {1};
  space.cores = 2;
  return space;
}

TEST(PlanSweepTest, ExpandsTheCrossProductInOrderAndCollapsesBatchOfOne) {
  absl::StatusOr<SweepPlan> plan = PlanSweep(TwoVariantSpace());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_THAT(Labels(*plan), ElementsAre("0 mb=1 none i=1 t=1", "0 mb=8 delay:100 i=1 t=1",
                                         "0 mb=8 p99:4000 i=1 t=1", "1 mb=1 none i=1 t=1",
                                         "1 mb=8 delay:100 i=1 t=1", "1 mb=8 p99:4000 i=1 t=1"));
  ASSERT_EQ(plan->skipped.size(), 2u);
  EXPECT_THAT(plan->skipped[0].reason, HasSubstr("same as 'none'"));
  EXPECT_EQ(plan->skipped[0].config.policy.Label(), "p99:4000");
}

TEST(PlanSweepTest, SkipsOversubscribedPointsUnlessAllowed) {
  SweepSpace space = TwoVariantSpace();
  space.variants.resize(1);
  space.max_batch_sizes = {8};
  space.policies = {Policy("delay:100")};
  space.instance_counts = {1, 2};
  space.threads = {1, 2};
  absl::StatusOr<SweepPlan> plan = PlanSweep(space);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_THAT(Labels(*plan), ElementsAre("0 mb=8 delay:100 i=1 t=1", "0 mb=8 delay:100 i=1 t=2",
                                         "0 mb=8 delay:100 i=2 t=1"));
  ASSERT_EQ(plan->skipped.size(), 1u);
  EXPECT_THAT(plan->skipped[0].reason, HasSubstr("4 compute threads on 2 cores"));

  space.allow_oversubscription = true;
  plan = PlanSweep(space);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->configs.size(), 4u);
}

TEST(PlanSweepTest, DefaultThreadsShareTheCoresAmongInstances) {
  SweepSpace space = TwoVariantSpace();
  space.variants.resize(1);
  space.max_batch_sizes = {8};
  space.policies = {Policy("none")};
  space.instance_counts = {1, 2, 4};
  space.threads = {0};
  space.cores = 4;
  absl::StatusOr<SweepPlan> plan = PlanSweep(space);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->configs.size(), 3u);
  EXPECT_EQ(plan->configs[0].effective_threads, 4);
  EXPECT_EQ(plan->configs[1].effective_threads, 2);
  EXPECT_EQ(plan->configs[2].effective_threads, 1);
  EXPECT_EQ(plan->configs[1].Label(), "mb=8 none i=2 t=auto(2)");
  EXPECT_EQ(EffectiveThreads(0, 8, 4), 1);
}

TEST(PlanSweepTest, VariantThatDoesNotBatchKeepsItsShape) {
  SweepSpace space = TwoVariantSpace();
  space.variants[1].base_max_batch_size = 0;
  absl::StatusOr<SweepPlan> plan = PlanSweep(space);
  ASSERT_TRUE(plan.ok()) << plan.status();
  std::vector<std::string> labels = Labels(*plan);
  EXPECT_EQ(labels.back(), "1 mb=0 none i=1 t=1");
  EXPECT_EQ(
      std::count_if(labels.begin(), labels.end(), [](const std::string& l) { return l[0] == '1'; }),
      1);
}

TEST(PlanSweepTest, SkipsMaxBatchBelowTheRowsPerRequest) {
  SweepSpace space = TwoVariantSpace();
  space.variants.resize(1);
  space.rows_per_request = 4;
  absl::StatusOr<SweepPlan> plan = PlanSweep(space);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_THAT(Labels(*plan), ElementsAre("0 mb=8 delay:100 i=1 t=1", "0 mb=8 p99:4000 i=1 t=1"));
  EXPECT_THAT(plan->skipped[0].reason, HasSubstr("below the 4 rows"));
}

TEST(PlanSweepTest, RefusesEmptyOrOutOfRangeAxes) {
  SweepSpace space = TwoVariantSpace();
  space.instance_counts = {};
  EXPECT_THAT(PlanSweep(space).status().message(), HasSubstr("no instance count"));
  space = TwoVariantSpace();
  space.max_batch_sizes = {0};
  EXPECT_THAT(PlanSweep(space).status().message(), HasSubstr("max batch size 0 is below 1"));
  space = TwoVariantSpace();
  space.threads = {-1};
  EXPECT_FALSE(PlanSweep(space).ok());
  space = TwoVariantSpace();
  space.variants.clear();
  EXPECT_THAT(PlanSweep(space).status().message(), HasSubstr("no variants"));
}

TEST(PlanSweepTest, NothingLeftToRunIsAnError) {
  SweepSpace space = TwoVariantSpace();
  space.instance_counts = {4};
  space.threads = {1};
  absl::StatusOr<SweepPlan> plan = PlanSweep(space);
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(plan.status().message(), HasSubstr("oversubscribed"));
}

}  // namespace
}  // namespace brigade::analyze
