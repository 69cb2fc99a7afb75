#ifndef BRIGADE_SERVE_HTTP_HTTP_BLOCKING_WORKER_H_
#define BRIGADE_SERVE_HTTP_HTTP_BLOCKING_WORKER_H_

// HttpBlockingWorker: one thread with a bounded queue, for the few requests whose work blocks
// (repository load/unload wait until a model is loaded and warmed up). Keeps that work off the
// io threads, which must never block, and runs it one task at a time, as repository changes are
// serialized anyway. (The twin of serve/grpc's BlockingWorker; the two belong in one
// src/serve/blocking_worker.h.)
//
// Thread safety: Submit() from any thread. Destruction runs the tasks already queued, then joins.
// Failure: Submit() returns false (and drops the task) when `max_queued` tasks are waiting or the
// worker is shutting down; the caller answers UNAVAILABLE at once.

#include <cstddef>
#include <deque>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/synchronization/mutex.h"

namespace brigade::serve {

class HttpBlockingWorker {
 public:
  explicit HttpBlockingWorker(size_t max_queued);
  HttpBlockingWorker(const HttpBlockingWorker&) = delete;
  HttpBlockingWorker& operator=(const HttpBlockingWorker&) = delete;
  ~HttpBlockingWorker();

  bool Submit(absl::AnyInvocable<void()> task);

 private:
  void Run();

  const size_t max_queued_;
  absl::Mutex mu_;
  std::deque<absl::AnyInvocable<void()>> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace brigade::serve

#endif  // BRIGADE_SERVE_HTTP_HTTP_BLOCKING_WORKER_H_
