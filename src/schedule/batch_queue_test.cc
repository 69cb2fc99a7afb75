#include "schedule/batch_queue.h"

#include <memory>
#include <vector>

#include "core/clock.h"
#include "gtest/gtest.h"

namespace brigade::schedule {
namespace {

std::unique_ptr<InferRequest> MakeRequest(std::string id, int rows, int width = 4,
                                          uint32_t priority = 0) {
  auto request = std::make_unique<InferRequest>();
  request->id = std::move(id);
  request->priority = priority;
  request->inputs.push_back({"x", *Tensor::Zeros(DataType::kFp32, {rows, width}), {}});
  request->on_complete = [](absl::StatusOr<InferResponse>) {};
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

TEST(BatchQueueTest, AFullQueueHandsTheRequestBack) {
  BatchQueueOptions options;
  options.max_queue_size = 2;
  BatchQueue queue(options);
  FakeClock clock;
  EXPECT_EQ(queue.Push(MakeRequest("a", 1), clock.NowNs()), nullptr);
  EXPECT_EQ(queue.Push(MakeRequest("b", 1), clock.NowNs()), nullptr);
  auto refused = queue.Push(MakeRequest("c", 1), clock.NowNs());
  ASSERT_NE(refused, nullptr);
  EXPECT_EQ(refused->id, "c");
  EXPECT_EQ(queue.size(), 2u);
}

TEST(BatchQueueTest, ExpiredAndCancelledRequestsLeaveWithoutRunning) {
  BatchQueue queue(Batching(8, 1000));
  FakeClock clock;
  auto timed = MakeRequest("timed", 1);
  timed->deadline = Deadline::AfterUs(clock.NowNs(), 10);
  auto cancelled = MakeRequest("cancelled", 1);
  cancelled->cancel = std::make_shared<CancelFlag>();
  queue.Push(std::move(timed), clock.NowNs());
  queue.Push(std::move(cancelled), clock.NowNs());
  queue.Push(MakeRequest("kept", 1), clock.NowNs());

  auto decision = queue.Next(clock.NowNs());
  EXPECT_TRUE(decision.batch.empty());
  EXPECT_TRUE(decision.expired.empty());
  // The wake-up is the deadline (10 µs), earlier than the batch delay (1000 µs).
  EXPECT_EQ(decision.wake_at_ns, clock.NowNs() + 10'000);

  queue.Next(clock.NowNs());
  clock.AdvanceUs(10);
  decision = queue.Next(clock.NowNs());
  EXPECT_EQ(Ids(decision.expired), (std::vector<std::string>{"timed"}));

  // Cancellation is noticed at the next decision.
  std::shared_ptr<CancelFlag> flag;
  for (auto& queued : queue.TakeAll()) {
    if (queued.request->id == "cancelled") flag = queued.request->cancel;
    queue.Push(std::move(queued.request), clock.NowNs());
  }
  flag->Cancel();
  decision = queue.Next(clock.NowNs());
  EXPECT_EQ(Ids(decision.expired), (std::vector<std::string>{"cancelled"}));
  EXPECT_EQ(queue.size(), 1u);
}

TEST(BatchQueueTest, FlushReleasesWithoutWaiting) {
  BatchQueue queue(Batching(8, 1'000'000));
  FakeClock clock;
  queue.Push(MakeRequest("a", 1), clock.NowNs());
  EXPECT_TRUE(queue.Next(clock.NowNs()).batch.empty());
  EXPECT_EQ(Ids(queue.Next(clock.NowNs(), /*flush=*/true).batch), (std::vector<std::string>{"a"}));
}

}  // namespace
}  // namespace brigade::schedule
