#include "serve/http/http_blocking_worker.h"

#include <utility>

namespace brigade::serve {

HttpBlockingWorker::HttpBlockingWorker(size_t max_queued)
    : max_queued_(max_queued), thread_([this] { Run(); }) {}

HttpBlockingWorker::~HttpBlockingWorker() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  thread_.join();
}

bool HttpBlockingWorker::Submit(absl::AnyInvocable<void()> task) {
  {
    absl::MutexLock lock(&mu_);
    if (!stopping_ && queue_.size() < max_queued_) {
      queue_.push_back(std::move(task));
      return true;
    }
  }
  return false;  // `task` is destroyed outside the lock
}

void HttpBlockingWorker::Run() {
  for (;;) {
    absl::AnyInvocable<void()> task;
    {
      absl::MutexLock lock(&mu_);
      auto has_work = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return !queue_.empty() || stopping_;
      };
      mu_.Await(absl::Condition(&has_work));
      if (queue_.empty()) return;  // stopping, and nothing left
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

}  // namespace brigade::serve
