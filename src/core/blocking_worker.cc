#include "core/blocking_worker.h"

#include <utility>

namespace brigade {

BlockingWorker::BlockingWorker(int max_queued, int threads)
    : max_queued_(max_queued < 1 ? 1 : max_queued) {
  for (int i = 0; i < (threads < 1 ? 1 : threads); ++i) threads_.emplace_back([this] { Run(); });
}

BlockingWorker::~BlockingWorker() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (std::thread& thread : threads_) thread.join();
}

bool BlockingWorker::Post(absl::AnyInvocable<void() &&> task) {
  absl::MutexLock lock(&mu_);
  if (stopping_ || static_cast<int>(tasks_.size()) >= max_queued_) return false;
  tasks_.push_back(std::move(task));
  return true;
}

bool BlockingWorker::PostOrRun(absl::AnyInvocable<void() &&> task) {
  {
    absl::MutexLock lock(&mu_);
    if (!stopping_ && static_cast<int>(tasks_.size()) < max_queued_) {
      tasks_.push_back(std::move(task));
      return true;
    }
  }
  std::move(task)();  // outside the lock, as on the worker
  return false;
}

void BlockingWorker::Run() {
  for (;;) {
    absl::AnyInvocable<void() &&> task;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(this, &BlockingWorker::ShouldWake));
      if (tasks_.empty()) return;  // stopping, and nothing left to run
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    std::move(task)();  // outside the lock: tasks block and answer clients
  }
}

}  // namespace brigade
