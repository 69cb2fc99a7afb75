#include "scheduler/response_orderer.h"

#include <algorithm>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace brigade::scheduler {
namespace {

// Records the order in which requests are answered.
class AnswerLog {
 public:
  std::unique_ptr<InferRequest> Request(uint64_t id) {
    auto request = std::make_unique<InferRequest>();
    request->on_complete = [this, id](absl::StatusOr<InferResponse>) {
      absl::MutexLock lock(&mu_);
      order_.push_back(id);
    };
    return request;
  }
  std::vector<uint64_t> order() const {
    absl::MutexLock lock(&mu_);
    return order_;
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<uint64_t> order_;
};

TEST(ResponseOrdererTest, HoldsAResultUntilEveryEarlierOneIsAnswered) {
  ResponseOrderer orderer;
  AnswerLog log;
  orderer.Complete(2, log.Request(2), InferResponse{});
  EXPECT_TRUE(log.order().empty());
  orderer.Complete(0, log.Request(0), InferResponse{});
  EXPECT_EQ(log.order(), (std::vector<uint64_t>{0}));
  EXPECT_EQ(orderer.held(), 1u);
  orderer.Complete(1, log.Request(1), absl::InternalError("errors are ordered too"));
  EXPECT_EQ(log.order(), (std::vector<uint64_t>{0, 1, 2}));
  EXPECT_EQ(orderer.held(), 0u);
}

TEST(ResponseOrdererTest, ASkippedSequenceDoesNotHoldLaterOnesBack) {
  ResponseOrderer orderer;
  AnswerLog log;
  orderer.Complete(1, log.Request(1), InferResponse{});
  orderer.Skip(0);
  EXPECT_EQ(log.order(), (std::vector<uint64_t>{1}));
}

TEST(ResponseOrdererTest, ConcurrentCompletionsAreAnsweredInSequenceOrder) {
  ResponseOrderer orderer;
  AnswerLog log;
  constexpr uint64_t kCount = 4000;
  constexpr uint64_t kThreads = 4;
  std::vector<std::thread> threads;
  for (uint64_t t = 0; t < kThreads; ++t) {
    // Thread t completes sequences t, t + 4, ... from the back, so most arrive early.
    threads.emplace_back([&, t] {
      for (uint64_t i = kCount - kThreads + t + 1; i-- > 0;) {
        if (i % kThreads != t) continue;
        if (i % 7 == 3) {
          orderer.Skip(i);
        } else {
          orderer.Complete(i, log.Request(i), InferResponse{});
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  const std::vector<uint64_t> order = log.order();
  EXPECT_EQ(order.size(), kCount - (kCount + 3) / 7);
  EXPECT_TRUE(std::is_sorted(order.begin(), order.end()));
  EXPECT_EQ(orderer.held(), 0u);
}

}  // namespace
}  // namespace brigade::scheduler
