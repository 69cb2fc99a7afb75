// Lints real exposition output with `promtool check metrics` (Prometheus' own parser and linter):
// the brigade_* families must parse and pass every lint rule; the Triton-compatible nv_* families
// must parse, and may only draw the naming lints Triton's names are known for.

#include "testing/promtool.h"

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "telemetry/request_metrics.h"
#include "telemetry/triton_metrics.h"

namespace brigade::telemetry {
namespace {

StageClock Stamped(int64_t base_ns, bool cache_hit) {
  StageClock clock;
  clock.Mark(Stage::kArrival, base_ns);
  clock.Mark(Stage::kDecoded, base_ns + 12'000);
  clock.Mark(Stage::kPreprocessed, base_ns + 20'000);
  if (!cache_hit) {
    clock.Mark(Stage::kQueueEnter, base_ns + 21'000);
    clock.Mark(Stage::kQueueLeave, base_ns + 80'000);
    clock.Mark(Stage::kInferStart, base_ns + 85'000);
    clock.Mark(Stage::kInferEnd, base_ns + 900'000);
    clock.Mark(Stage::kPostprocessed, base_ns + 910'000);
  }
  clock.Mark(Stage::kSent, base_ns + 960'000);
  return clock;
}

class PromtoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::PromtoolInstalled()) GTEST_SKIP() << "promtool not installed";
    metrics_ = *RequestMetrics::Create(&registry_);
    // Label values that need escaping must survive the round trip.
    for (const char* name : {"resnet", "we\"ird\\name"}) {
      ModelRequestMetrics* model = metrics_->ForModel(name, "1");
      model->queue_length().Set(2);
      model->in_flight().Set(3);
      model->busy_instances().Set(1);
      for (int i = 0; i < 50; ++i) {
        const bool hit = i % 5 == 0;
        model->RecordRequest(i % 2 ? Protocol::kHttp : Protocol::kGrpc,
                             i % 7 ? RequestOutcome::kSuccess : RequestOutcome::kRejected,
                             Stamped(1'000'000 * i, hit));
        if (!hit) model->RecordBatch(1 + i % 8);
      }
      stats_.push_back(std::make_unique<ModelStats>(name, "1", 8));
      stats_.back()->RecordSuccess(900'000);
      stats_.back()->RecordFailure(protocol::FailureReason::kRejected, 40'000);
      stats_.back()->RecordExecution(4, 2, 1'000, 2'000, 3'000);
    }
    metrics_->Unresolved()->RecordRequest(Protocol::kHttp, RequestOutcome::kError, Stamped(5, 1));
  }

  MetricsRegistry registry_;
  std::unique_ptr<RequestMetrics> metrics_;
  std::vector<std::unique_ptr<ModelStats>> stats_;
};

TEST_F(PromtoolTest, BrigadeFamiliesPassEveryLint) {
  const std::string text = registry_.Text();
  ASSERT_THAT(text, ::testing::HasSubstr("brigade_request_stage_duration_seconds_bucket"));
  const absl::StatusOr<testing::PromtoolResult> result = testing::CheckMetrics(text);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->exit_code, 0) << result->findings;
  EXPECT_EQ(result->findings, "");
}

TEST_F(PromtoolTest, FullScrapeWithTritonFamiliesParsesAndOnlyNvNamesDrawLints) {
  std::string text = registry_.Text();
  std::vector<protocol::ModelStatistics> snapshots;
  for (const auto& stats : stats_) snapshots.push_back(stats->Snapshot());
  AppendTritonMetrics(snapshots, metrics_.get(), &text);
  const absl::StatusOr<testing::PromtoolResult> result = testing::CheckMetrics(text);
  ASSERT_TRUE(result.ok()) << result.status();
  // 0 = clean, 3 = lint problems only; 1 would be a parse error.
  ASSERT_TRUE(result->exit_code == 0 || result->exit_code == 3) << result->findings;
  std::istringstream lines(result->findings);
  std::string line;
  while (std::getline(lines, line)) {
    EXPECT_TRUE(line.starts_with("nv_")) << "unexpected lint: " << line;
  }
}

}  // namespace
}  // namespace brigade::telemetry
