#include "core/blocking_worker.h"

#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade {
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

TEST(BlockingWorkerTest, SeveralThreadsRunTasksSideBySide) {
  // Two tasks that each wait for the other to start can only finish on two threads.
  absl::Notification first_started;
  absl::Notification second_started;
  {
    BlockingWorker worker(4, /*threads=*/2);
    ASSERT_TRUE(worker.Post([&] {
      first_started.Notify();
      second_started.WaitForNotification();
    }));
    ASSERT_TRUE(worker.Post([&] {
      second_started.Notify();
      first_started.WaitForNotification();
    }));
  }  // joins both threads: returns only if both tasks ran at once
  EXPECT_TRUE(first_started.HasBeenNotified() && second_started.HasBeenNotified());
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

TEST(BlockingWorkerTest, PostOrRunRunsOnTheCallerWhenTheQueueIsFull) {
  absl::Notification started;
  absl::Notification release;
  std::thread::id ran_on;
  int queued_ran = 0;
  {
    BlockingWorker worker(1);
    ASSERT_TRUE(worker.Post([&] {
      started.Notify();
      release.WaitForNotification();
    }));
    started.WaitForNotification();
    EXPECT_TRUE(worker.PostOrRun([&] { ++queued_ran; })) << "one waiting task fits";
    EXPECT_FALSE(worker.PostOrRun([&] { ran_on = std::this_thread::get_id(); }));
    EXPECT_EQ(ran_on, std::this_thread::get_id()) << "the overflow ran before PostOrRun returned";
    release.Notify();
  }
  EXPECT_EQ(queued_ran, 1);
}

}  // namespace
}  // namespace brigade
