#ifndef BRIGADE_FRONTEND_HTTP_IO_THREAD_H_
#define BRIGADE_FRONTEND_HTTP_IO_THREAD_H_

// IoThread: one Asio io_context run by one thread. The HTTP server runs N of them and gives each
// connection to exactly one, so a connection's handlers never run concurrently and need no strand
// or lock.
//
// Post() is how other threads (inference callbacks) reach a connection. It refuses work once
// Stop() began, so nothing can be queued on a context that no thread will ever run again; what was
// queued before the stop is run by Stop() itself, on the caller's thread, so every posted
// completion releases what it holds.
//
// Thread safety: Post() and RunningInThisThread() from any thread; Start()/Stop() from the owner.
// Lifetime: shared (std::shared_ptr) by the server and every connection on it, so the io_context
// outlives every socket and timer bound to it even when a connection outlives the server.

#include <thread>
#include <utility>  // before Asio: Boost 1.74 Asio misses it under C++20 with g++ 12

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/synchronization/mutex.h"
#include "boost/asio/executor_work_guard.hpp"
#include "boost/asio/io_context.hpp"

namespace brigade::frontend {

class IoThread {
 public:
  IoThread();
  IoThread(const IoThread&) = delete;
  IoThread& operator=(const IoThread&) = delete;
  ~IoThread();

  boost::asio::io_context& context() { return context_; }

  void Start();
  // Queues `task` to run on this thread; false (and `task` is dropped) once Stop() began.
  bool Post(absl::AnyInvocable<void()> task);
  bool RunningInThisThread();
  // Stops the loop, joins the thread, then runs whatever was queued before the stop.
  void Stop();

 private:
  void Run();

  boost::asio::io_context context_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::thread thread_;
  absl::Mutex mu_;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace brigade::frontend

#endif  // BRIGADE_FRONTEND_HTTP_IO_THREAD_H_
