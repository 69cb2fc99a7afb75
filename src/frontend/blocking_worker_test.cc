#include "frontend/blocking_worker.h"

#include <vector>

#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::frontend {
namespace {

TEST(BlockingWorkerTest, RunsTasksInPostedOrder) {
  absl::Mutex mu;
  std::vector<int> order;
  absl::Notification last_ran;
  {
    BlockingWorker worker(8);
    for (int i = 0; i < 5; ++i) {
      ASSERT_TRUE(worker.Post([&, i] {
        absl::MutexLock lock(&mu);
        order.push_back(i);
      }));
    }
    ASSERT_TRUE(worker.Post([&] { last_ran.Notify(); }));
    last_ran.WaitForNotification();
  }
  EXPECT_THAT(order, ::testing::ElementsAre(0, 1, 2, 3, 4));
}

TEST(BlockingWorkerTest, RefusesWhenTheQueueIsFull) {
  absl::Notification started;
  absl::Notification release;
  int ran = 0;
  {
    BlockingWorker worker(2);
    ASSERT_TRUE(worker.Post([&] {
      started.Notify();
      release.WaitForNotification();
      ++ran;
    }));
    started.WaitForNotification();  // the first task left the queue and is running
    EXPECT_TRUE(worker.Post([&] { ++ran; }));
    EXPECT_TRUE(worker.Post([&] { ++ran; }));
    EXPECT_FALSE(worker.Post([&] { ++ran; })) << "a third waiting task exceeds the bound";
    release.Notify();
  }  // the destructor runs what was queued before joining
  EXPECT_EQ(ran, 3);
}

}  // namespace
}  // namespace brigade::frontend
