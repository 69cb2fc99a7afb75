#include "telemetry/triton_metrics.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::telemetry {
namespace {

using ::testing::HasSubstr;

TEST(TritonMetricsTest, WritesTritonFamiliesFromStatisticsInMicroseconds) {
  ModelStats stats("resnet", "3", 8);
  stats.RecordSuccess(2'500'000);
  stats.RecordFailure(protocol::FailureReason::kBackend, 500'000);
  stats.RecordQueue(40'000);
  stats.RecordExecution(4, 2, 1'000, 900'000, 2'000);
  stats.RecordCacheHit(10);
  MetricsRegistry registry;
  auto request_metrics = *RequestMetrics::Create(&registry);
  request_metrics->ForModel("resnet", "3")->queue_length().Set(5);

  std::string out;
  const protocol::ModelStatistics snapshots[] = {stats.Snapshot()};
  AppendTritonMetrics(snapshots, request_metrics.get(), &out);
  const std::string labels = "{model=\"resnet\",version=\"3\"}";
  EXPECT_THAT(out, HasSubstr("# TYPE nv_inference_request_success counter\n"));
  EXPECT_THAT(out, HasSubstr("nv_inference_request_success" + labels + " 1\n"));
  EXPECT_THAT(out, HasSubstr("nv_inference_count" + labels + " 4\n"));
  EXPECT_THAT(out, HasSubstr("nv_inference_exec_count" + labels + " 1\n"));
  // Successful requests only, as Triton counts it.
  EXPECT_THAT(out, HasSubstr("nv_inference_request_duration_us" + labels + " 2500\n"));
  EXPECT_THAT(out, HasSubstr("nv_inference_queue_duration_us" + labels + " 40\n"));
  // Both requests of the batch are charged the batch's compute time.
  EXPECT_THAT(out, HasSubstr("nv_inference_compute_infer_duration_us" + labels + " 1800\n"));
  EXPECT_THAT(out, HasSubstr("nv_cache_num_hits_per_model" + labels + " 1\n"));
  EXPECT_THAT(out, HasSubstr("nv_inference_pending_request_count" + labels + " 5\n"));
}

TEST(TritonMetricsTest, FailuresCarryTritonsReasonWithEveryReasonListed) {
  ModelStats stats("resnet", "3", 8);
  stats.RecordFailure(protocol::FailureReason::kRejected, 1'000);
  stats.RecordFailure(protocol::FailureReason::kRejected, 1'000);
  stats.RecordFailure(protocol::FailureReason::kBackend, 1'000);
  std::string out;
  const protocol::ModelStatistics snapshots[] = {stats.Snapshot()};
  AppendTritonMetrics(snapshots, nullptr, &out);
  const std::string series = "nv_inference_request_failure{model=\"resnet\",version=\"3\",reason=";
  EXPECT_THAT(out, HasSubstr("# TYPE nv_inference_request_failure counter\n"));
  EXPECT_THAT(out, HasSubstr(series + "\"REJECTED\"} 2\n"));
  EXPECT_THAT(out, HasSubstr(series + "\"CANCELED\"} 0\n"));
  EXPECT_THAT(out, HasSubstr(series + "\"BACKEND\"} 1\n"));
  EXPECT_THAT(out, HasSubstr(series + "\"OTHER\"} 0\n"));
  // No series without a reason: a sum over reasons is the total.
  EXPECT_THAT(out, ::testing::Not(
                       HasSubstr("nv_inference_request_failure{model=\"resnet\",version=\"3\"}")));
}

TEST(TritonMetricsTest, NothingForNoModelsAndNoPendingWithoutRequestMetrics) {
  std::string out;
  AppendTritonMetrics({}, nullptr, &out);
  EXPECT_EQ(out, "");
  ModelStats stats("m", "1", 0);
  const protocol::ModelStatistics snapshots[] = {stats.Snapshot()};
  AppendTritonMetrics(snapshots, nullptr, &out);
  EXPECT_THAT(out, HasSubstr("nv_inference_count{model=\"m\",version=\"1\"} 0\n"));
  EXPECT_THAT(out, ::testing::Not(HasSubstr("pending")));
}

}  // namespace
}  // namespace brigade::telemetry
