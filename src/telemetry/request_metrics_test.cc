#include "telemetry/request_metrics.h"

#include <atomic>
#include <cmath>
#include <thread>

#include "core/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::telemetry {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

StageClock ClockWithTotalNs(int64_t total_ns) {
  StageClock clock;
  clock.Mark(Stage::kArrival, 1'000'000);
  clock.Mark(Stage::kDecoded, 1'000'000 + total_ns / 10);
  clock.Mark(Stage::kPreprocessed, 1'000'000 + total_ns / 5);
  clock.Mark(Stage::kQueueEnter, 1'000'000 + total_ns / 5);
  clock.Mark(Stage::kQueueLeave, 1'000'000 + total_ns / 2);
  clock.Mark(Stage::kInferStart, 1'000'000 + total_ns / 2);
  clock.Mark(Stage::kInferEnd, 1'000'000 + total_ns * 8 / 10);
  clock.Mark(Stage::kPostprocessed, 1'000'000 + total_ns * 9 / 10);
  clock.Mark(Stage::kSent, 1'000'000 + total_ns);
  return clock;
}

class RequestMetricsTest : public ::testing::Test {
 protected:
  void SetUp() override { metrics_ = *RequestMetrics::Create(&registry_); }
  MetricsRegistry registry_;
  std::unique_ptr<RequestMetrics> metrics_;
};

TEST_F(RequestMetricsTest, OutcomesFollowStatusCodes) {
  EXPECT_EQ(OutcomeFromStatus(absl::OkStatus()), RequestOutcome::kSuccess);
  EXPECT_EQ(OutcomeFromStatus(absl::UnavailableError("full")), RequestOutcome::kRejected);
  EXPECT_EQ(OutcomeFromStatus(absl::ResourceExhaustedError("x")), RequestOutcome::kRejected);
  EXPECT_EQ(OutcomeFromStatus(absl::DeadlineExceededError("x")), RequestOutcome::kTimedOut);
  EXPECT_EQ(OutcomeFromStatus(absl::CancelledError("x")), RequestOutcome::kCancelled);
  EXPECT_EQ(OutcomeFromStatus(absl::InvalidArgumentError("x")), RequestOutcome::kError);
  EXPECT_EQ(RequestOutcomeName(RequestOutcome::kTimedOut), "timed_out");
}

TEST_F(RequestMetricsTest, RegisteringTwiceInOneRegistryFails) {
  EXPECT_EQ(RequestMetrics::Create(&registry_).status().code(), absl::StatusCode::kAlreadyExists);
}

TEST_F(RequestMetricsTest, RecordRequestCountsOutcomeAndObservesEveryStage) {
  ModelRequestMetrics* model = metrics_->ForModel("resnet", "1");
  EXPECT_EQ(metrics_->ForModel("resnet", "1"), model);
  model->RecordRequest(Protocol::kHttp, RequestOutcome::kSuccess, ClockWithTotalNs(1'000'000));
  model->RecordRequest(Protocol::kHttp, RequestOutcome::kSuccess, ClockWithTotalNs(3'000'000));
  model->RecordRequest(Protocol::kGrpc, RequestOutcome::kRejected, ClockWithTotalNs(40'000));
  const std::string text = registry_.Text();
  EXPECT_THAT(text, HasSubstr("brigade_requests_total{model=\"resnet\",version=\"1\","
                              "protocol=\"http\",outcome=\"success\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("brigade_requests_total{model=\"resnet\",version=\"1\","
                              "protocol=\"grpc\",outcome=\"rejected\"} 1\n"));
  // total = 1 ms + 3 ms.
  EXPECT_THAT(text, HasSubstr("brigade_request_stage_duration_seconds_sum{model=\"resnet\","
                              "version=\"1\",protocol=\"http\",stage=\"total\"} 0.004\n"));
  // compute = queue leave (t/2) → infer end (8t/10) = 0.3 ms + 0.9 ms.
  EXPECT_THAT(text, HasSubstr("brigade_request_stage_duration_seconds_sum{model=\"resnet\","
                              "version=\"1\",protocol=\"http\",stage=\"compute\"} 0.0012\n"));
  EXPECT_THAT(text, HasSubstr("brigade_request_stage_duration_seconds_count{model=\"resnet\","
                              "version=\"1\",protocol=\"grpc\",stage=\"queue\"} 1\n"));
  // Series appear only once observed.
  EXPECT_THAT(text, Not(HasSubstr("outcome=\"timed_out\"")));
  EXPECT_THAT(text, Not(HasSubstr("protocol=\"inprocess\"")));
}

TEST_F(RequestMetricsTest, GaugesExistFromLoadAndUnresolvedHasNone) {
  ModelRequestMetrics* model = metrics_->ForModel("m", "2");
  model->queue_length().Set(3);
  model->in_flight().Increment();
  metrics_->Unresolved()->RecordRequest(Protocol::kHttp, RequestOutcome::kError, StageClock());
  const std::string text = registry_.Text();
  EXPECT_THAT(text, HasSubstr("brigade_queue_length{model=\"m\",version=\"2\"} 3\n"));
  EXPECT_THAT(text, HasSubstr("brigade_requests_in_flight{model=\"m\",version=\"2\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("brigade_instances_busy{model=\"m\",version=\"2\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("brigade_requests_total{model=\"\",version=\"\",protocol=\"http\","
                              "outcome=\"error\"} 1\n"));
  EXPECT_THAT(text, Not(HasSubstr("brigade_queue_length{model=\"\"")));
}

TEST_F(RequestMetricsTest, BatchSeriesAndNoCacheFamilyOfItsOwn) {
  ModelRequestMetrics* model = metrics_->ForModel("m", "1");
  model->RecordBatch(3);
  model->RecordBatch(8);
  const std::string text = registry_.Text();
  EXPECT_THAT(text, HasSubstr("brigade_batch_size_bucket{model=\"m\",version=\"1\",le=\"4\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("brigade_batch_size_bucket{model=\"m\",version=\"1\",le=\"8\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("brigade_batch_size_sum{model=\"m\",version=\"1\"} 11\n"));
  // Cache hits and misses are the response cache's families (cache/cache_metrics.h) only.
  EXPECT_THAT(text, Not(HasSubstr("brigade_cache_")));
}

TEST_F(RequestMetricsTest, StageSummaryMergesProtocolsAndEstimatesQuantiles) {
  ModelRequestMetrics* model = metrics_->ForModel("m", "1");
  // 100 requests, total 1.5 ms each over HTTP, and 100 at 15 ms over gRPC.
  for (int i = 0; i < 100; ++i) {
    model->RecordRequest(Protocol::kHttp, RequestOutcome::kSuccess, ClockWithTotalNs(1'500'000));
    model->RecordRequest(Protocol::kGrpc, RequestOutcome::kSuccess, ClockWithTotalNs(15'000'000));
  }
  const std::vector<protocol::StageLatency> summary = model->StageSummary();
  ASSERT_EQ(summary.size(), static_cast<size_t>(kNumLatencyStages));
  const protocol::StageLatency& total = summary[static_cast<size_t>(LatencyStage::kTotal)];
  EXPECT_EQ(total.stage, "total");
  EXPECT_EQ(total.count, 200u);
  // p50: rank 100 = all of bucket (1 ms, 2 ms] → its top.
  EXPECT_DOUBLE_EQ(total.p50_ns, 2'000'000.0);
  // p99: rank 198 = 98/100 into (10 ms, 20 ms].
  EXPECT_DOUBLE_EQ(total.p99_ns, 19'800'000.0);
  const protocol::StageLatency unused = metrics_->ForModel("other", "1")->StageSummary()[0];
  EXPECT_EQ(unused.count, 0u);
  EXPECT_TRUE(std::isnan(unused.p50_ns));
}

TEST_F(RequestMetricsTest, LookupFindsLoadedVersionsOnlyAndNamesFallBackToUnresolved) {
  EXPECT_EQ(metrics_->Lookup("m", "1"), nullptr);
  ModelRequestMetrics* model = metrics_->ForModel("m", "1");
  metrics_->ForModel("m", "2");
  EXPECT_EQ(metrics_->Lookup("m", "1"), model);
  EXPECT_EQ(metrics_->Lookup("m", "3"), nullptr);
  metrics_->RecordRequest("m", "1", Protocol::kGrpc, RequestOutcome::kSuccess, StageClock());
  metrics_->RecordRequest("nope", "1", Protocol::kGrpc, RequestOutcome::kError, StageClock());
  const std::string text = registry_.Text();
  EXPECT_THAT(text, HasSubstr("brigade_requests_total{model=\"m\",version=\"1\","
                              "protocol=\"grpc\",outcome=\"success\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("brigade_requests_total{model=\"\",version=\"\","
                              "protocol=\"grpc\",outcome=\"error\"} 1\n"));
  EXPECT_THAT(text, Not(HasSubstr("nope")));
}

TEST_F(RequestMetricsTest, AnEmptyVersionCountsUnderTheModelsNewestVersion) {
  EXPECT_EQ(metrics_->Lookup("m", ""), nullptr);
  metrics_->ForModel("m", "9");
  ModelRequestMetrics* newest = metrics_->ForModel("m", "10");
  metrics_->ForModel("m", "2");
  EXPECT_EQ(metrics_->Lookup("m", ""), newest);
  metrics_->RecordRequest("m", "", Protocol::kHttp, RequestOutcome::kError, StageClock());
  EXPECT_THAT(registry_.Text(), HasSubstr("brigade_requests_total{model=\"m\",version=\"10\","
                                          "protocol=\"http\",outcome=\"error\"} 1\n"));
  EXPECT_EQ(metrics_->Lookup("other", ""), nullptr);
}

TEST_F(RequestMetricsTest, LookupIsSafeWhileModelsLoad) {
  std::atomic<bool> done{false};
  std::thread loader([&] {
    for (int i = 0; i < 200; ++i) metrics_->ForModel(StrCat("m", i), "1");
    done = true;
  });
  int64_t found = 0;
  while (!done) {
    for (int i = 0; i < 200; i += 17) {
      if (ModelRequestMetrics* handle = metrics_->Lookup(StrCat("m", i), "1")) {
        EXPECT_EQ(handle->model(), StrCat("m", i));
        ++found;
      }
    }
  }
  loader.join();
  for (int i = 0; i < 200; ++i) ASSERT_NE(metrics_->Lookup(StrCat("m", i), "1"), nullptr);
  RecordProperty("handles_found_while_loading", static_cast<int>(found));
}

}  // namespace
}  // namespace brigade::telemetry
