#include "frontend/http/io_thread.h"

#include <exception>

#include "boost/asio/post.hpp"

namespace brigade::frontend {

// Concurrency hint 1: one thread runs each context, which lets Asio skip its scheduler locking on
// that thread's own operations (posts from other threads stay safe).
IoThread::IoThread() : context_(1), work_(boost::asio::make_work_guard(context_)) {}

IoThread::~IoThread() { Stop(); }

void IoThread::Start() {
  thread_ = std::thread([this] { Run(); });
}

void IoThread::Run() {
  for (;;) {
    try {
      context_.run();
      return;
    } catch (const std::exception&) {
      // A handler threw (std::bad_alloc): the connection it belonged to is lost, the others are
      // not. Keep serving.
    }
  }
}

bool IoThread::Post(absl::AnyInvocable<void()> task) {
  {
    absl::MutexLock lock(&mu_);
    if (!stopped_) {
      boost::asio::post(context_, [task = std::move(task)]() mutable { task(); });
      return true;
    }
  }
  return false;  // `task` is destroyed here, outside the lock
}

bool IoThread::RunningInThisThread() { return context_.get_executor().running_in_this_thread(); }

void IoThread::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stopped_) return;
    stopped_ = true;
  }
  work_.reset();
  context_.stop();
  if (thread_.joinable()) thread_.join();
  context_.restart();
  try {
    context_.poll();
  } catch (const std::exception&) {
    // Nothing left to protect: the context is shutting down.
  }
}

}  // namespace brigade::frontend
