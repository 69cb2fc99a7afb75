#include "serve/http/http_blocking_worker.h"

#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace brigade::serve {
namespace {

TEST(HttpBlockingWorkerTest, RunsTasksInOrderOnItsThread) {
  std::vector<int> order;
  absl::Mutex mu;
  absl::Notification done;
  {
    HttpBlockingWorker worker(8);
    for (int i = 0; i < 5; ++i) {
      ASSERT_TRUE(worker.Submit([&, i] {
        absl::MutexLock lock(&mu);
        order.push_back(i);
      }));
    }
  }  // destruction runs what is queued
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
}

TEST(HttpBlockingWorkerTest, RefusesWorkBeyondItsQueueBound) {
  HttpBlockingWorker worker(2);
  absl::Notification started, release;
  ASSERT_TRUE(worker.Submit([&] {
    started.Notify();
    release.WaitForNotification();
  }));
  started.WaitForNotification();  // the first task runs; the queue is empty again
  EXPECT_TRUE(worker.Submit([] {}));
  EXPECT_TRUE(worker.Submit([] {}));
  EXPECT_FALSE(worker.Submit([] {}));  // two waiting: full
  release.Notify();
}

}  // namespace
}  // namespace brigade::serve
