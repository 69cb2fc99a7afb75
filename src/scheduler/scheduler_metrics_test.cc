#include "scheduler/scheduler_metrics.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "engine/builtin/builtin_backend.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/scheduler.h"
#include "testing/promtool.h"

namespace brigade::scheduler {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A snapshot with known counts: max batch 32, three released batches (3, 3 and 20 rows).
SchedulerSnapshot KnownSnapshot() {
  SchedulerStats stats(/*max_batch_size=*/32);
  stats.RecordAdmitted();
  stats.RecordRefusal(Refusal::kQueueFull, 300'000);
  stats.RecordRefusal(Refusal::kQueueFull, 200'000);
  stats.RecordRefusal(Refusal::kPredictedLate, 40'000);
  for (const int rows : {3, 3, 20}) {
    BatchQueue::Decision decision;
    decision.rows = rows;
    decision.reason = rows == 3 ? BatchReason::kPreferred : BatchReason::kSloLimit;
    decision.oldest_wait_ns = 1'500'000;  // 1.5 ms
    decision.predicted_p50_ns = 800'000;
    decision.predicted_p99_ns = 2'000'000;
    stats.RecordRelease(decision);
    stats.RecordOutcome(decision.predicted_p50_ns, decision.predicted_p99_ns,
                        rows == 20 ? 3'000'000 : 1'000'000);
  }
  SchedulerSnapshot snapshot = stats.counters();
  snapshot.model_name = "resnet";
  snapshot.version = 2;
  snapshot.policy = "p99_model";
  snapshot.queue_size = 5;
  snapshot.utilization = 0.75;
  snapshot.profile = {{-1, 3, 10, 900'000, 1'200'000}, {0, 3, 10, 1'000'000, 1'500'000}};
  return snapshot;
}

std::string Render(const std::vector<SchedulerSnapshot>& snapshots) {
  std::string text;
  AppendSchedulerMetrics(snapshots, &text);
  return text;
}

TEST(SchedulerMetricsTest, NothingIsWrittenWithoutSchedulers) { EXPECT_EQ(Render({}), ""); }

TEST(SchedulerMetricsTest, RefusalsAndRemovalsAreCountedByReason) {
  const std::string text = Render({KnownSnapshot()});
  EXPECT_THAT(text, HasSubstr("# TYPE brigade_scheduler_refused_total counter\n"));
  EXPECT_THAT(text, HasSubstr("brigade_scheduler_refused_total{model=\"resnet\",version=\"2\","
                              "reason=\"queue_full\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("brigade_scheduler_refused_total{model=\"resnet\",version=\"2\","
                              "reason=\"predicted_late\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("brigade_scheduler_refused_total{model=\"resnet\",version=\"2\","
                              "reason=\"draining\"} 0\n"));
  EXPECT_THAT(text,
              HasSubstr("brigade_scheduler_admitted_total{model=\"resnet\",version=\"2\"} 1\n"));
  // Three refusals, all under 0.5 ms (le 0.0005 in seconds), one under 50 µs.
  EXPECT_THAT(text, HasSubstr("brigade_scheduler_refusal_latency_seconds_bucket{model=\"resnet\","
                              "version=\"2\",le=\"5e-05\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("brigade_scheduler_refusal_latency_seconds_bucket{model=\"resnet\","
                              "version=\"2\",le=\"0.0005\"} 3\n"));
  EXPECT_THAT(text, HasSubstr("brigade_scheduler_refusal_latency_seconds_sum{model=\"resnet\","
                              "version=\"2\"} 0.00054\n"));
}

TEST(SchedulerMetricsTest, BatchDecisionsShowSizeReasonWaitAndPredictedVersusMeasured) {
  const std::string text = Render({KnownSnapshot()});
  const std::string series = "{model=\"resnet\",version=\"2\"";
  // Exact buckets up to 16, then 32: the two 3-row batches are at le=3, the 20-row one at 32.
  EXPECT_THAT(text, HasSubstr("brigade_scheduler_batch_size_bucket" + series + ",le=\"2\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("brigade_scheduler_batch_size_bucket" + series + ",le=\"3\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("brigade_scheduler_batch_size_bucket" + series + ",le=\"16\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("brigade_scheduler_batch_size_bucket" + series + ",le=\"32\"} 3\n"));
  EXPECT_THAT(text, HasSubstr("brigade_scheduler_batch_size_sum" + series + "} 26\n"));
  EXPECT_THAT(text, HasSubstr("brigade_scheduler_batch_size_count" + series + "} 3\n"));
  EXPECT_THAT(text,
              HasSubstr("brigade_scheduler_batches_total" + series + ",reason=\"preferred\"} 2\n"));
  EXPECT_THAT(text,
              HasSubstr("brigade_scheduler_batches_total" + series + ",reason=\"slo_limit\"} 1\n"));
  EXPECT_THAT(text, Not(HasSubstr("reason=\"wait\"")));
  EXPECT_THAT(text, HasSubstr("brigade_scheduler_batch_wait_seconds_bucket" + series +
                              ",le=\"0.001\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("brigade_scheduler_batch_wait_seconds_bucket" + series +
                              ",le=\"0.0025\"} 3\n"));
  // Predicted p99 2 ms for all three; measured 1, 1 and 3 ms: one was slower than predicted.
  EXPECT_THAT(text,
              HasSubstr("brigade_scheduler_predicted_p99_seconds_sum" + series + "} 0.006\n"));
  EXPECT_THAT(text, HasSubstr("brigade_scheduler_service_seconds_sum" + series + "} 0.005\n"));
  EXPECT_THAT(text, HasSubstr("brigade_scheduler_predicted_batches_total" + series + "} 3\n"));
  EXPECT_THAT(text,
              HasSubstr("brigade_scheduler_slower_than_predicted_p99_total" + series + "} 1\n"));
  // |1-0.8| + |1-0.8| + |3-0.8| ms = 2.6 ms.
  EXPECT_THAT(text, HasSubstr("brigade_scheduler_p50_prediction_error_seconds_total" + series +
                              "} 0.0026\n"));
  EXPECT_THAT(text, HasSubstr("brigade_scheduler_info" + series + ",policy=\"p99_model\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("brigade_scheduler_queue_requests" + series + "} 5\n"));
  EXPECT_THAT(text, HasSubstr("brigade_scheduler_utilization" + series + "} 0.75\n"));
  EXPECT_THAT(text, HasSubstr("brigade_scheduler_profile_p99_seconds" + series +
                              ",instance=\"pooled\",batch_size=\"3\"} 0.0012\n"));
  EXPECT_THAT(text, HasSubstr("brigade_scheduler_profile_p50_seconds" + series +
                              ",instance=\"0\",batch_size=\"3\"} 0.001\n"));
}

TEST(SchedulerMetricsTest, EachFamilyIsWrittenOnceWithEveryVersionsSamplesTogether) {
  SchedulerSnapshot other = KnownSnapshot();
  other.version = 3;
  const std::string text = Render({KnownSnapshot(), other});
  size_t families = 0;
  for (size_t at = text.find("# TYPE brigade_scheduler_admitted_total"); at != std::string::npos;
       at = text.find("# TYPE brigade_scheduler_admitted_total", at + 1)) {
    ++families;
  }
  EXPECT_EQ(families, 1u);
  EXPECT_THAT(text,
              HasSubstr("brigade_scheduler_admitted_total{model=\"resnet\",version=\"2\"} 1\n"
                        "brigade_scheduler_admitted_total{model=\"resnet\",version=\"3\"} 1\n"));
}

std::shared_ptr<engine::Model> AddSubModel() {
  engine::ModelLoadOptions options;
  options.model_name = "simple";
  options.max_batch_size = 8;
  options.parameters["op"] = "add_sub";
  options.declared_inputs = {{"INPUT0", DataType::kInt32, {-1, 2}},
                             {"INPUT1", DataType::kInt32, {-1, 2}}};
  options.declared_outputs = {{"OUTPUT0", DataType::kInt32, {-1, 2}},
                              {"OUTPUT1", DataType::kInt32, {-1, 2}}};
  engine::BuiltinBackend backend;
  return *backend.Load(options);
}

// A live scheduler's snapshot (with a learned profile) and a model name that needs escaping.
TEST(SchedulerMetricsTest, ALiveSchedulersMetricsPassPromtoolWithoutLints) {
  if (!testing::PromtoolInstalled()) GTEST_SKIP() << "promtool not installed";
  Scheduler::Options options;
  options.model_name = "we\"ird\\name";
  options.queue.max_batch_size = 8;
  options.queue.dynamic_batching = true;
  options.queue.policy = BatchPolicyKind::kP99Model;
  options.queue.target_p99_us = 100'000;
  options.pin_threads = false;
  auto stats = std::make_shared<telemetry::ModelStats>("simple", "1", 8);
  auto scheduler = Scheduler::Create(options, AddSubModel(), stats);
  ASSERT_TRUE(scheduler.ok()) << scheduler.status();
  absl::Mutex mu;
  int answered = 0;
  constexpr int kRequests = 50;
  for (int i = 0; i < kRequests; ++i) {
    auto request = std::make_unique<InferRequest>();
    std::vector<int32_t> x = {i, i};
    request->inputs.push_back({"INPUT0", *Tensor::FromValues<int32_t>({1, 2}, x), {}});
    request->inputs.push_back({"INPUT1", *Tensor::FromValues<int32_t>({1, 2}, x), {}});
    request->on_complete = [&](absl::StatusOr<InferResponse>) {
      absl::MutexLock lock(&mu);
      ++answered;
    };
    (*scheduler)->Enqueue(std::move(request));
  }
  {
    absl::MutexLock lock(&mu);
    mu.Await(absl::Condition(
        +[](int* n) { return *n == kRequests; }, &answered));
  }
  (*scheduler)->Drain();
  const std::vector<SchedulerSnapshot> snapshots = {(*scheduler)->Snapshot(), KnownSnapshot()};
  ASSERT_FALSE(snapshots[0].profile.empty());
  const std::string text = Render(snapshots);
  ASSERT_THAT(text, HasSubstr("model=\"we\\\"ird\\\\name\""));
  const absl::StatusOr<testing::PromtoolResult> result = testing::CheckMetrics(text);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->exit_code, 0) << result->findings << "\n" << text;
  EXPECT_EQ(result->findings, "");
}

}  // namespace
}  // namespace brigade::scheduler
