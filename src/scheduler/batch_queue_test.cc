#include "scheduler/batch_queue.h"

#include <memory>
#include <vector>

#include "core/clock.h"
#include "gtest/gtest.h"

namespace brigade::scheduler {
namespace {

std::unique_ptr<InferRequest> MakeRequest(std::string id, int rows, int width = 4,
                                          uint32_t priority = 0) {
  auto request = std::make_unique<InferRequest>();
  request->id = std::move(id);
  request->priority = priority;
  request->inputs.push_back({"x", *Tensor::Zeros(DataType::kFp32, {rows, width}), {}});
  // No on_complete: the queue never answers requests, and these are dropped unanswered (an armed
  // callback would trip InferRequest's destructor check in builds with assertions).
  return request;
}

std::vector<std::string> Ids(const std::vector<QueuedRequest>& batch) {
  std::vector<std::string> ids;
  for (const QueuedRequest& queued : batch) ids.push_back(queued.request->id);
  return ids;
}

BatchQueueOptions Batching(int max_batch, int64_t delay_us, std::vector<int> preferred = {}) {
  BatchQueueOptions options;
  options.max_batch_size = max_batch;
  options.dynamic_batching = true;
  options.max_queue_delay_us = delay_us;
  options.preferred_batch_sizes = std::move(preferred);
  return options;
}

TEST(BatchQueueTest, WithoutDynamicBatchingEachRequestRunsAlone) {
  BatchQueueOptions options;
  options.max_batch_size = 8;
  BatchQueue queue(options);
  FakeClock clock;
  queue.Push(MakeRequest("a", 1), clock.NowNs());
  queue.Push(MakeRequest("b", 1), clock.NowNs());
  EXPECT_EQ(Ids(queue.Next(clock.NowNs()).batch), (std::vector<std::string>{"a"}));
  EXPECT_EQ(Ids(queue.Next(clock.NowNs()).batch), (std::vector<std::string>{"b"}));
  EXPECT_TRUE(queue.Next(clock.NowNs()).batch.empty());
}

TEST(BatchQueueTest, ZeroDelayReleasesWhateverIsQueued) {
  BatchQueue queue(Batching(8, 0));
  FakeClock clock;
  queue.Push(MakeRequest("a", 1), clock.NowNs());
  queue.Push(MakeRequest("b", 2), clock.NowNs());
  auto decision = queue.Next(clock.NowNs());
  EXPECT_EQ(Ids(decision.batch), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(queue.empty());
}

TEST(BatchQueueTest, WaitsForTheDelayThenReleasesAPartialBatch) {
  BatchQueue queue(Batching(8, 100));
  FakeClock clock;
  queue.Push(MakeRequest("a", 1), clock.NowNs());
  auto decision = queue.Next(clock.NowNs());
  EXPECT_TRUE(decision.batch.empty());
  EXPECT_EQ(decision.wake_at_ns, clock.NowNs() + 100'000);
  clock.AdvanceUs(60);
  queue.Push(MakeRequest("b", 1), clock.NowNs());
  EXPECT_TRUE(queue.Next(clock.NowNs()).batch.empty());
  clock.AdvanceUs(40);  // the oldest request has now waited exactly the delay
  EXPECT_EQ(Ids(queue.Next(clock.NowNs()).batch), (std::vector<std::string>{"a", "b"}));
}

TEST(BatchQueueTest, AFullBatchLeavesWithoutWaiting) {
  BatchQueue queue(Batching(4, 1'000'000));
  FakeClock clock;
  queue.Push(MakeRequest("a", 2), clock.NowNs());
  queue.Push(MakeRequest("b", 2), clock.NowNs());
  queue.Push(MakeRequest("c", 1), clock.NowNs());
  EXPECT_EQ(Ids(queue.Next(clock.NowNs()).batch), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(queue.size(), 1u);
}

TEST(BatchQueueTest, RowsNeverExceedTheMaximum) {
  BatchQueue queue(Batching(4, 0));
  FakeClock clock;
  queue.Push(MakeRequest("a", 3), clock.NowNs());
  queue.Push(MakeRequest("b", 2), clock.NowNs());
  queue.Push(MakeRequest("c", 1), clock.NowNs());
  // b does not fit next to a; c does (first fit, arrival order otherwise kept).
  EXPECT_EQ(Ids(queue.Next(clock.NowNs()).batch), (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(Ids(queue.Next(clock.NowNs()).batch), (std::vector<std::string>{"b"}));
}

TEST(BatchQueueTest, APreferredSizeIsReleasedAtOnce) {
  BatchQueue queue(Batching(8, 1'000'000, {2, 4}));
  FakeClock clock;
  queue.Push(MakeRequest("a", 1), clock.NowNs());
  EXPECT_TRUE(queue.Next(clock.NowNs()).batch.empty());
  queue.Push(MakeRequest("b", 1), clock.NowNs());
  EXPECT_EQ(Ids(queue.Next(clock.NowNs()).batch), (std::vector<std::string>{"a", "b"}));
}

TEST(BatchQueueTest, DelayExpiryCutsToTheLargestPreferredSize) {
  BatchQueue queue(Batching(8, 50, {2, 4}));
  FakeClock clock;
  for (const char* id : {"a", "b", "c"}) queue.Push(MakeRequest(id, 1), clock.NowNs());
  EXPECT_TRUE(queue.Next(clock.NowNs()).batch.empty());  // 3 is not preferred
  clock.AdvanceUs(50);
  EXPECT_EQ(Ids(queue.Next(clock.NowNs()).batch), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(queue.size(), 1u);
}

TEST(BatchQueueTest, OnlyShapeCompatibleRequestsShareABatch) {
  BatchQueue queue(Batching(8, 0));
  FakeClock clock;
  queue.Push(MakeRequest("a", 1, /*width=*/4), clock.NowNs());
  queue.Push(MakeRequest("b", 1, /*width=*/5), clock.NowNs());
  queue.Push(MakeRequest("c", 1, /*width=*/4), clock.NowNs());
  EXPECT_EQ(Ids(queue.Next(clock.NowNs()).batch), (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(Ids(queue.Next(clock.NowNs()).batch), (std::vector<std::string>{"b"}));
}

// Requests of a model with inputs "x" and an optional "bias"; without `bias` the request omits
// it (an empty tensor in its place, as the request validator leaves it).
std::unique_ptr<InferRequest> MakeBiasRequest(std::string id, int rows, bool bias) {
  auto request = std::make_unique<InferRequest>();
  request->id = std::move(id);
  request->inputs.push_back({"x", *Tensor::Zeros(DataType::kFp32, {rows, 4}), {}});
  request->inputs.push_back(
      {"bias", bias ? *Tensor::Zeros(DataType::kFp32, {rows, 4}) : Tensor(), {}});
  return request;
}

TEST(BatchQueueTest, RequestsWithAndWithoutAnOptionalInputNeverShareABatch) {
  BatchQueue queue(Batching(8, 0));
  FakeClock clock;
  queue.Push(MakeBiasRequest("given1", 1, true), clock.NowNs());
  queue.Push(MakeBiasRequest("omitted1", 2, false), clock.NowNs());
  queue.Push(MakeBiasRequest("given2", 1, true), clock.NowNs());
  queue.Push(MakeBiasRequest("omitted2", 1, false), clock.NowNs());
  BatchQueue::Decision first = queue.Next(clock.NowNs());
  EXPECT_EQ(Ids(first.batch), (std::vector<std::string>{"given1", "given2"}));
  EXPECT_EQ(first.rows, 2);
  BatchQueue::Decision second = queue.Next(clock.NowNs());
  EXPECT_EQ(Ids(second.batch), (std::vector<std::string>{"omitted1", "omitted2"}));
  EXPECT_EQ(second.rows, 3);
}

TEST(BatchQueueTest, RowsComeFromTheFirstGivenInput) {
  InferRequest request;
  request.inputs.push_back({"bias", Tensor(), {}});
  request.inputs.push_back({"x", *Tensor::Zeros(DataType::kFp32, {3, 4}), {}});
  EXPECT_EQ(RequestRows(request, 8), 3);
}

TEST(BatchQueueTest, HigherPriorityLevelsGoFirst) {
  BatchQueueOptions options;
  options.max_batch_size = 8;
  options.priority_levels = 3;
  options.default_priority_level = 2;
  BatchQueue queue(options);
  FakeClock clock;
  queue.Push(MakeRequest("low", 1, 4, /*priority=*/3), clock.NowNs());
  queue.Push(MakeRequest("default", 1, 4, /*priority=*/0), clock.NowNs());
  queue.Push(MakeRequest("high", 1, 4, /*priority=*/1), clock.NowNs());
  EXPECT_EQ(Ids(queue.Next(clock.NowNs()).batch), (std::vector<std::string>{"high"}));
  EXPECT_EQ(Ids(queue.Next(clock.NowNs()).batch), (std::vector<std::string>{"default"}));
  EXPECT_EQ(Ids(queue.Next(clock.NowNs()).batch), (std::vector<std::string>{"low"}));
}

TEST(BatchQueueTest, AnUnknownPriorityLevelMeansTheDefaultLevel) {
  BatchQueueOptions options;
  options.max_batch_size = 8;
  options.priority_levels = 3;
  options.default_priority_level = 2;
  BatchQueue queue(options);
  FakeClock clock;
  queue.Push(MakeRequest("low", 1, 4, /*priority=*/3), clock.NowNs());
  queue.Push(MakeRequest("beyond", 1, 4, /*priority=*/9), clock.NowNs());
  EXPECT_EQ(queue.level_size(2), 1u);
  EXPECT_EQ(Ids(queue.Next(clock.NowNs()).batch), (std::vector<std::string>{"beyond"}));
}

TEST(BatchQueueTest, AFullQueueHandsTheRequestBack) {
  BatchQueueOptions options;
  options.max_queue_size = 2;
  BatchQueue queue(options);
  FakeClock clock;
  EXPECT_EQ(queue.Push(MakeRequest("a", 1), clock.NowNs()).refused, nullptr);
  EXPECT_EQ(queue.Push(MakeRequest("b", 1), clock.NowNs()).refused, nullptr);
  auto admission = queue.Push(MakeRequest("c", 1), clock.NowNs());
  ASSERT_NE(admission.refused, nullptr);
  EXPECT_EQ(admission.refused->id, "c");
  EXPECT_EQ(admission.refusal, Refusal::kQueueFull);
  EXPECT_EQ(queue.size(), 2u);
}

// Deadlines no longer shorten the batch wait (a timer in the Scheduler watches next_expiry_ns()),
// so the decision's wake-up is the batch delay alone.
TEST(BatchQueueTest, ExpiredAndCancelledRequestsLeaveWithoutRunning) {
  BatchQueue queue(Batching(8, 1000));
  FakeClock clock;
  auto timed = MakeRequest("timed", 1);
  timed->deadline = Deadline::AfterUs(clock.NowNs(), 10);
  auto cancelled = MakeRequest("cancelled", 1);
  auto flag = std::make_shared<CancelFlag>();
  cancelled->cancel = flag;
  queue.Push(std::move(timed), clock.NowNs());
  queue.Push(std::move(cancelled), clock.NowNs());
  queue.Push(MakeRequest("kept", 1), clock.NowNs());
  EXPECT_EQ(queue.cancellable(), 1u);
  EXPECT_EQ(queue.next_expiry_ns(), clock.NowNs() + 10'000);

  auto decision = queue.Next(clock.NowNs());
  EXPECT_TRUE(decision.batch.empty());
  EXPECT_TRUE(decision.expired.empty());
  EXPECT_EQ(decision.wake_at_ns, clock.NowNs() + 1'000'000);

  clock.AdvanceUs(10);
  decision = queue.Next(clock.NowNs());
  EXPECT_EQ(Ids(decision.expired), (std::vector<std::string>{"timed"}));
  EXPECT_EQ(queue.next_expiry_ns(), INT64_MAX);

  flag->Cancel();
  decision = queue.Next(clock.NowNs());
  EXPECT_EQ(Ids(decision.expired), (std::vector<std::string>{"cancelled"}));
  EXPECT_EQ(queue.size(), 1u);
  EXPECT_EQ(queue.cancellable(), 0u);
}

TEST(BatchQueueTest, FlushReleasesWithoutWaiting) {
  BatchQueue queue(Batching(8, 1'000'000));
  FakeClock clock;
  queue.Push(MakeRequest("a", 1), clock.NowNs());
  EXPECT_TRUE(queue.Next(clock.NowNs()).batch.empty());
  EXPECT_EQ(Ids(queue.Next(clock.NowNs(), /*flush=*/true).batch), (std::vector<std::string>{"a"}));
}

BatchQueueOptions Unbatched(QueuePolicy policy) {
  BatchQueueOptions options;
  options.max_batch_size = 8;
  options.default_queue_policy = policy;
  return options;
}

QueuePolicy Timeout(int64_t timeout_us, QueuePolicy::TimeoutAction action, bool override_ok) {
  QueuePolicy policy;
  policy.default_timeout_us = timeout_us;
  policy.timeout_action = action;
  policy.allow_timeout_override = override_ok;
  return policy;
}

constexpr auto kReject = QueuePolicy::TimeoutAction::kReject;
constexpr auto kDelay = QueuePolicy::TimeoutAction::kDelay;

TEST(BatchQueueTest, ALevelsMaxQueueSizeRefusesOnlyThatLevel) {
  BatchQueueOptions options;
  options.max_batch_size = 8;
  options.priority_levels = 2;
  options.default_priority_level = 2;
  options.priority_queue_policy[2].max_queue_size = 1;
  BatchQueue queue(options);
  FakeClock clock;
  EXPECT_EQ(queue.Push(MakeRequest("low", 1), clock.NowNs()).refused, nullptr);
  auto second = queue.Push(MakeRequest("low2", 1, 4, /*priority=*/2), clock.NowNs());
  ASSERT_NE(second.refused, nullptr);
  EXPECT_EQ(second.refusal, Refusal::kLevelFull);
  EXPECT_EQ(second.level, 2);
  EXPECT_EQ(queue.Push(MakeRequest("high", 1, 4, /*priority=*/1), clock.NowNs()).refused, nullptr);
  EXPECT_EQ(queue.level_size(1), 1u);
  EXPECT_EQ(queue.level_size(2), 1u);
}

TEST(BatchQueueTest, RejectPolicyRemovesARequestWhenItsTimeoutPassesWithoutABatchForming) {
  // A one-second batch delay: no batch forms, only the timeout can remove the request.
  BatchQueueOptions options = Batching(8, 1'000'000);
  options.default_queue_policy = Timeout(100, kReject, false);
  BatchQueue queue(options);
  FakeClock clock;
  const auto admission = queue.Push(MakeRequest("a", 1), clock.NowNs());
  EXPECT_EQ(admission.deadline_ns, clock.NowNs() + 100'000);
  EXPECT_EQ(queue.next_expiry_ns(), clock.NowNs() + 100'000);
  clock.AdvanceUs(99);
  EXPECT_TRUE(queue.Expire(clock.NowNs()).empty());
  clock.AdvanceUs(1);
  EXPECT_EQ(Ids(queue.Expire(clock.NowNs())), (std::vector<std::string>{"a"}));
  EXPECT_TRUE(queue.empty());
}

TEST(BatchQueueTest, DelayPolicyMovesATimedOutRequestBehindItsLevel) {
  BatchQueue queue(Unbatched(Timeout(50, kDelay, false)));
  FakeClock clock;
  queue.Push(MakeRequest("old", 1), clock.NowNs());
  clock.AdvanceUs(50);
  queue.Push(MakeRequest("new", 1), clock.NowNs());
  EXPECT_TRUE(queue.Expire(clock.NowNs()).empty());  // delayed, not rejected
  EXPECT_EQ(queue.delayed_total(), 1u);
  EXPECT_EQ(queue.size(), 2u);
  EXPECT_EQ(Ids(queue.Next(clock.NowNs()).batch), (std::vector<std::string>{"new"}));
  clock.AdvanceUs(1000);  // "new" times out too, but delayed requests keep their place
  EXPECT_EQ(Ids(queue.Next(clock.NowNs()).batch), (std::vector<std::string>{"old"}));
}

TEST(BatchQueueTest, ARequestTimeoutOnlyShortensTheDefaultWhenOverrideIsAllowed) {
  FakeClock clock;
  const int64_t now = clock.NowNs();
  auto with_timeout = [&](int64_t timeout_us) {
    auto request = MakeRequest("r", 1);
    request->deadline = Deadline::AfterUs(now, timeout_us);
    return request;
  };
  BatchQueue allowed(Unbatched(Timeout(100, kReject, true)));
  EXPECT_EQ(allowed.Push(with_timeout(30), now).deadline_ns, now + 30'000);
  EXPECT_EQ(allowed.Push(with_timeout(500), now).deadline_ns, now + 100'000);
  BatchQueue fixed(Unbatched(Timeout(100, kReject, false)));
  EXPECT_EQ(fixed.Push(with_timeout(30), now).deadline_ns, now + 100'000);
  // No default timeout: the request's own deadline applies (Triton would ignore it).
  BatchQueue none(Unbatched(Timeout(0, kReject, false)));
  EXPECT_EQ(none.Push(with_timeout(30), now).deadline_ns, now + 30'000);
  EXPECT_EQ(none.Push(MakeRequest("no deadline", 1), now).deadline_ns, INT64_MAX);
}

TEST(BatchQueueTest, ARequestPastItsDeadlineIsRefusedOnArrival) {
  BatchQueue queue(Unbatched(QueuePolicy{}));
  FakeClock clock;
  auto request = MakeRequest("late", 1);
  request->deadline = Deadline::AtNs(clock.NowNs());
  auto admission = queue.Push(std::move(request), clock.NowNs());
  ASSERT_NE(admission.refused, nullptr);
  EXPECT_EQ(admission.refusal, Refusal::kExpired);
  EXPECT_TRUE(queue.empty());
}

TEST(BatchQueueTest, ACancelledRequestLeavesAtTheNextExpireWithoutABatch) {
  BatchQueue queue(Batching(8, 1'000'000));
  FakeClock clock;
  auto request = MakeRequest("gone", 1);
  auto flag = std::make_shared<CancelFlag>();
  request->cancel = flag;
  queue.Push(std::move(request), clock.NowNs());
  queue.Push(MakeRequest("stays", 1), clock.NowNs());
  EXPECT_TRUE(queue.Expire(clock.NowNs()).empty());
  flag->Cancel();
  EXPECT_EQ(Ids(queue.Expire(clock.NowNs())), (std::vector<std::string>{"gone"}));
  EXPECT_EQ(queue.size(), 1u);
}

TEST(BatchQueueTest, SequenceNumbersFollowAdmissionOrder) {
  BatchQueueOptions options;
  options.max_batch_size = 8;
  options.priority_levels = 2;
  BatchQueue queue(options);
  FakeClock clock;
  queue.Push(MakeRequest("first", 1, 4, 2), clock.NowNs());
  queue.Push(MakeRequest("second", 1, 4, 1), clock.NowNs());
  auto batch = queue.Next(clock.NowNs()).batch;  // the higher level runs first...
  ASSERT_EQ(Ids(batch), (std::vector<std::string>{"second"}));
  EXPECT_EQ(batch[0].sequence, 1u);  // ...but keeps its admission number
  EXPECT_EQ(queue.Next(clock.NowNs()).batch[0].sequence, 0u);
}

// A profile where a batch of b rows always takes 1000 + 250 * b microseconds.
void LearnLinearCost(BatchQueue& queue, FakeClock& clock) {
  for (int rows : {1, 2, 3, 4}) {
    for (int i = 0; i < 10; ++i) {
      queue.mutable_load().OnBatchDone(0, rows, (1000 + 250 * rows) * 1000, clock.NowNs());
    }
  }
}

TEST(BatchQueueTest, AdmissionControlRefusesARequestPredictedToMissItsDeadline) {
  BatchQueueOptions options = Batching(4, 0);
  options.admission_control = true;
  BatchQueue queue(options);
  FakeClock clock;
  LearnLinearCost(queue, clock);
  const int64_t now = clock.NowNs();
  auto with_timeout = [&](std::string id, int64_t timeout_us) {
    auto request = MakeRequest(std::move(id), 1);
    request->deadline = Deadline::AfterUs(now, timeout_us);
    return request;
  };
  // Nothing ahead: one row takes 1250 µs.
  auto first = queue.Push(with_timeout("fits", 1500), now);
  EXPECT_EQ(first.refused, nullptr);
  EXPECT_EQ(first.predicted_completion_ns, now + 1'250'000);
  for (int i = 0; i < 3; ++i) queue.Push(MakeRequest("ahead", 1), now);
  // Four rows ahead: two batches of 4 (2000 µs each) on one instance.
  auto late = queue.Push(with_timeout("late", 1500), now);
  ASSERT_NE(late.refused, nullptr);
  EXPECT_EQ(late.refusal, Refusal::kPredictedLate);
  EXPECT_EQ(late.predicted_completion_ns, now + 4'000'000);
  EXPECT_EQ(late.admission_deadline_ns, now + 1'500'000);
  // The same request with a looser deadline is admitted.
  EXPECT_EQ(queue.Push(with_timeout("patient", 5000), now).refused, nullptr);
}

// Serves `count` one-row requests one at a time, each answered `late_us` after its predicted
// p99 completion (the profile itself keeps predicting 1250 µs for a row).
void AnswerLate(BatchQueue& queue, FakeClock& clock, int count, int64_t late_us) {
  for (int i = 0; i < count; ++i) {
    const int64_t start = clock.NowNs();
    queue.Push(MakeRequest("late", 1), start);
    BatchQueue::Decision decision = queue.Next(start);
    ASSERT_EQ(decision.batch.size(), 1u);
    const int64_t expected = decision.batch[0].expected_done_ns;
    ASSERT_EQ(expected, start + 1'250'000);
    clock.AdvanceNs(1'250'000 + late_us * 1000);
    const int64_t done = clock.NowNs();
    queue.OnBatchDone(0, 0, 0, done);  // rows 0: the profile keeps its linear cost
    const int64_t answered[] = {expected};
    queue.mutable_load().OnAnswered(answered, done);
  }
}

TEST(BatchQueueTest, SloPredictionAddsHowLateRecentAnswersCame) {
  BatchQueue queue(Batching(4, 0));
  FakeClock clock;
  LearnLinearCost(queue, clock);
  EXPECT_EQ(queue.PredictCompletionNs(1, clock.NowNs()), clock.NowNs() + 1'250'000);
  // Answers came 3 ms after what the profile and the queue predicted (the front end, the
  // machine's contention): the router's prediction adds that tail.
  AnswerLate(queue, clock, 100, 3000);
  const int64_t predicted = queue.PredictCompletionNs(1, clock.NowNs()) - clock.NowNs();
  EXPECT_GE(predicted, 1'250'000 + 2'600'000);  // within a histogram bucket (15%) of 3 ms
  EXPECT_LE(predicted, 1'250'000 + 3'000'000);
}

TEST(BatchQueueTest, SloPredictionCountsTheTimeBeforeTheQueue) {
  BatchQueue queue(Batching(4, 0));
  FakeClock clock;
  LearnLinearCost(queue, clock);
  auto request = MakeRequest("routed", 1);
  // It reached the front end 2 ms before the queue: answered on the predicted instant, it is
  // 2 ms later than a prediction made at arrival.
  request->clock.Mark(Stage::kArrival, clock.NowNs() - 2'000'000);
  queue.Push(std::move(request), clock.NowNs());
  BatchQueue::Decision decision = queue.Next(clock.NowNs());
  ASSERT_EQ(decision.batch.size(), 1u);
  EXPECT_EQ(decision.batch[0].expected_done_ns, clock.NowNs() + 1'250'000 - 2'000'000);
}

TEST(BatchQueueTest, SloPredictionForgetsLatenessOnceItsAnswersAgeOut) {
  BatchQueue queue(Batching(4, 0));
  FakeClock clock;
  LearnLinearCost(queue, clock);
  AnswerLate(queue, clock, 100, 10'000);
  EXPECT_GT(queue.PredictCompletionNs(1, clock.NowNs()) - clock.NowNs(), 10'000'000);
  // No answers for ten half-lives (a router that stopped sending): predicted afresh, or it
  // would never be sent anything again.
  clock.AdvanceNs(5'000'000'000);
  EXPECT_EQ(queue.PredictCompletionNs(1, clock.NowNs()), clock.NowNs() + 1'250'000);
}

TEST(BatchQueueTest, SloPredictionCountsEarlyAnswersAsOnTime) {
  BatchQueue queue(Batching(4, 0));
  FakeClock clock;
  LearnLinearCost(queue, clock);
  const int64_t now = clock.NowNs();
  // Answers before their prediction, and requests that had none (-1), add nothing.
  std::vector<int64_t> expected(100, now + 5'000'000);
  expected[0] = -1;
  queue.mutable_load().OnAnswered(expected, now);
  EXPECT_EQ(queue.PredictCompletionNs(1, now), now + 1'250'000);
}

TEST(BatchQueueTest, AdmissionControlAdmitsWhileTheProfileIsEmpty) {
  BatchQueueOptions options = Batching(4, 0);
  options.admission_control = true;
  BatchQueue queue(options);
  FakeClock clock;
  auto request = MakeRequest("a", 1);
  request->deadline = Deadline::AfterUs(clock.NowNs(), 1);
  auto admission = queue.Push(std::move(request), clock.NowNs());
  EXPECT_EQ(admission.refused, nullptr);
  EXPECT_EQ(admission.predicted_completion_ns, -1);
}

TEST(BatchQueueTest, AReleasedBatchCarriesItsExplanation) {
  BatchQueue queue(Batching(4, 100));
  FakeClock clock;
  LearnLinearCost(queue, clock);
  queue.Push(MakeRequest("a", 1), clock.NowNs());
  clock.AdvanceUs(40);
  queue.Push(MakeRequest("b", 1), clock.NowNs());
  clock.AdvanceUs(60);
  auto decision = queue.Next(clock.NowNs());
  ASSERT_EQ(decision.batch.size(), 2u);
  EXPECT_EQ(decision.reason, BatchReason::kDelayExpired);
  EXPECT_EQ(decision.rows, 2);
  EXPECT_EQ(decision.oldest_wait_ns, 100'000);
  EXPECT_EQ(decision.predicted_p50_ns, 1'500'000);
  EXPECT_EQ(decision.predicted_p99_ns, 1'500'000);
}

TEST(BatchQueueTest, AnInjectedPolicyDecidesTheSize) {
  class TakeOne final : public BatchPolicy {
   public:
    std::string_view name() const override { return "take_one"; }
    BatchChoice Choose(const BatchView& view) const override {
      EXPECT_EQ(view.rows, 3);
      EXPECT_EQ(view.queued_rows, 3);
      return {1, INT64_MAX, BatchReason::kFormula};
    }
  };
  BatchQueue queue(Batching(8, 0), std::make_unique<TakeOne>());
  FakeClock clock;
  for (const char* id : {"a", "b", "c"}) queue.Push(MakeRequest(id, 1), clock.NowNs());
  auto decision = queue.Next(clock.NowNs());
  EXPECT_EQ(Ids(decision.batch), (std::vector<std::string>{"a"}));
  EXPECT_EQ(decision.reason, BatchReason::kFormula);
}

}  // namespace
}  // namespace brigade::scheduler
