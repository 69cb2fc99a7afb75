#include "telemetry/async_batch_worker.h"

#include <vector>

#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::telemetry {
namespace {

using Worker = AsyncBatchWorker<int>;

// Records batches; optionally holds the worker inside the first sink call until released.
struct RecordingSink {
  absl::Mutex mu;
  std::vector<std::vector<int>> batches ABSL_GUARDED_BY(mu);
  absl::Notification entered;
  absl::Notification release;
  bool block_first = false;

  Worker::Sink Sink() {
    return [this](std::vector<int> batch) {
      if (block_first && !entered.HasBeenNotified()) {
        entered.Notify();
        release.WaitForNotification();
      }
      absl::MutexLock lock(&mu);
      batches.push_back(std::move(batch));
    };
  }
  std::vector<std::vector<int>> Batches() {
    absl::MutexLock lock(&mu);
    return batches;
  }
};

TEST(AsyncBatchWorkerTest, FlushDeliversEverythingInOrderInBatchesOfAtMostMaxBatch) {
  RecordingSink sink;
  Worker worker({.capacity = 100, .max_batch = 3, .max_delay = absl::Seconds(60)}, sink.Sink());
  for (int i = 0; i < 7; ++i) ASSERT_TRUE(worker.TryPush(i));
  ASSERT_TRUE(worker.Flush(absl::Seconds(10)));
  std::vector<int> all;
  for (const auto& batch : sink.Batches()) {
    EXPECT_LE(batch.size(), 3u);
    all.insert(all.end(), batch.begin(), batch.end());
  }
  EXPECT_THAT(all, testing::ElementsAre(0, 1, 2, 3, 4, 5, 6));
  EXPECT_EQ(worker.completed(), 7u);
  EXPECT_EQ(worker.dropped(), 0u);
}

TEST(AsyncBatchWorkerTest, FullQueueDropsAndCountsWithoutBlocking) {
  RecordingSink sink;
  sink.block_first = true;
  Worker worker({.capacity = 2, .max_batch = 1, .max_delay = absl::ZeroDuration()}, sink.Sink());
  ASSERT_TRUE(worker.TryPush(1));
  sink.entered.WaitForNotification();  // the worker holds item 1 inside the sink
  EXPECT_TRUE(worker.TryPush(2));
  EXPECT_TRUE(worker.TryPush(3));
  EXPECT_FALSE(worker.TryPush(4));          // queue (2, 3) is full
  EXPECT_FALSE(worker.TryPushAll({5, 6}));  // all or nothing
  EXPECT_EQ(worker.dropped(), 3u);
  sink.release.Notify();
  ASSERT_TRUE(worker.Flush(absl::Seconds(10)));
  EXPECT_EQ(worker.completed(), 3u);
}

TEST(AsyncBatchWorkerTest, FlushTimesOutWhileTheSinkIsStuck) {
  RecordingSink sink;
  sink.block_first = true;
  Worker worker({.capacity = 8, .max_batch = 1, .max_delay = absl::ZeroDuration()}, sink.Sink());
  ASSERT_TRUE(worker.TryPush(1));
  sink.entered.WaitForNotification();
  EXPECT_FALSE(worker.Flush(absl::Milliseconds(1)));
  sink.release.Notify();
  EXPECT_TRUE(worker.Flush(absl::Seconds(10)));
}

TEST(AsyncBatchWorkerTest, DestructionDeliversWhatIsQueued) {
  RecordingSink sink;
  {
    Worker worker({.capacity = 100, .max_batch = 50, .max_delay = absl::Seconds(60)}, sink.Sink());
    for (int i = 0; i < 10; ++i) worker.TryPush(i);
  }
  size_t delivered = 0;
  for (const auto& batch : sink.Batches()) delivered += batch.size();
  EXPECT_EQ(delivered, 10u);
}

}  // namespace
}  // namespace brigade::telemetry
