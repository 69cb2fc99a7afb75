#ifndef BRIGADE_CORE_BLOCKING_WORKER_H_
#define BRIGADE_CORE_BLOCKING_WORKER_H_

// BlockingWorker: a thread (or a few) that runs work off the threads that must not wait for it. The
// front ends post calls that may block for seconds (repository load and unload wait for a model to
// be loaded and warmed up; cache invalidation waits for Redis), since HTTP io threads and gRPC
// callback threads must not block; the request pipeline posts what follows an answer (the cache
// store, the coalesced followers) so instance threads go back to their queues at once.
//
// With one thread (the default) tasks run one at a time in the order posted; with `threads` > 1
// they start in the order posted and run side by side (the request pipeline's pre-processing
// pool, sized so it and the model instances together stay within the cores). The queue is
// bounded: Post() refuses (returns
// false) when `max_queued` tasks are already waiting, and the caller answers UNAVAILABLE;
// PostOrRun() runs such a task on the caller's thread instead (for work that must happen, where
// slowing the caller down is the right back-pressure). The destructor runs every task already
// queued, then joins the thread.
//
// Thread safety: Post() may be called from any thread. Tasks run on the worker's thread and must
// not Post() and then wait for their own follow-up task.

#include <deque>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/synchronization/mutex.h"

namespace brigade {

class BlockingWorker {
 public:
  explicit BlockingWorker(int max_queued, int threads = 1);
  ~BlockingWorker();

  BlockingWorker(const BlockingWorker&) = delete;
  BlockingWorker& operator=(const BlockingWorker&) = delete;

  // Queues `task`; false (and `task` dropped unrun) when the queue is full or stopping.
  bool Post(absl::AnyInvocable<void() &&> task);
  // Queues `task`, or runs it before returning when the queue is full or stopping; true when it
  // was queued.
  bool PostOrRun(absl::AnyInvocable<void() &&> task);

 private:
  void Run();
  bool ShouldWake() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stopping_ || !tasks_.empty();
  }

  const int max_queued_;
  absl::Mutex mu_;
  std::deque<absl::AnyInvocable<void() &&>> tasks_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace brigade

#endif  // BRIGADE_CORE_BLOCKING_WORKER_H_
