#ifndef BRIGADE_TELEMETRY_ASYNC_BATCH_WORKER_H_
#define BRIGADE_TELEMETRY_ASYNC_BATCH_WORKER_H_

// AsyncBatchWorker<T>: a bounded queue drained in batches by one background thread. It is how
// observability output (spans, access-log lines) leaves the request path:
//
//   request threads ── TryPush (never blocks; full → dropped and counted) ──► queue (≤ capacity)
//   worker thread   ── every max_batch items, or max_delay after the first one waits, or on
//                      Flush/stop ──► sink(batch), called without any lock held
//
// Worst case memory is `capacity` items; worst case staleness is max_delay plus one sink call.
// The sink may block (file or network I/O): only the worker thread waits for it, and the queue
// keeps accepting (then dropping) meanwhile.
//
// Thread safety: TryPush, Flush and the counters are safe from any thread. The sink runs on the
// worker thread only, one batch at a time. The destructor stops admission, hands what is queued
// to the sink, and joins the thread.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace brigade::telemetry {

template <typename T>
class AsyncBatchWorker {
 public:
  struct Options {
    size_t capacity = 2048;
    size_t max_batch = 512;
    absl::Duration max_delay = absl::Seconds(5);
  };
  using Sink = absl::AnyInvocable<void(std::vector<T> batch)>;

  AsyncBatchWorker(Options options, Sink sink)
      : options_(Sanitize(options)), sink_(std::move(sink)), thread_([this] { Run(); }) {}

  ~AsyncBatchWorker() {
    {
      absl::MutexLock lock(&mu_);
      stopping_ = true;
      work_cv_.Signal();
    }
    thread_.join();
  }

  AsyncBatchWorker(const AsyncBatchWorker&) = delete;
  AsyncBatchWorker& operator=(const AsyncBatchWorker&) = delete;

  // Queues `item`; false (and counted as dropped) when the queue is full or stopping.
  bool TryPush(T item) {
    std::vector<T> one;
    one.push_back(std::move(item));
    return TryPushAll(std::move(one));
  }

  // Queues all of `items` or none of them (a request's spans travel together).
  bool TryPushAll(std::vector<T> items) {
    absl::MutexLock lock(&mu_);
    if (stopping_ || queue_.size() + items.size() > options_.capacity) {
      dropped_ += items.size();
      return false;
    }
    const bool was_empty = queue_.empty();
    for (T& item : items) queue_.push_back(std::move(item));
    accepted_ += items.size();
    if (was_empty || queue_.size() >= options_.max_batch) work_cv_.Signal();
    return true;
  }

  // Waits until everything accepted before the call has gone through the sink, or `timeout`
  // passes; true when it has.
  bool Flush(absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    const uint64_t target = accepted_;
    const absl::Time deadline = absl::Now() + timeout;
    ++flush_requests_;
    work_cv_.Signal();
    while (completed_ < target) {
      if (done_cv_.WaitWithDeadline(&mu_, deadline)) break;  // true: timed out
    }
    --flush_requests_;
    return completed_ >= target;
  }

  uint64_t dropped() const {
    absl::MutexLock lock(&mu_);
    return dropped_;
  }
  // Items that went through the sink.
  uint64_t completed() const {
    absl::MutexLock lock(&mu_);
    return completed_;
  }
  size_t queued() const {
    absl::MutexLock lock(&mu_);
    return queue_.size();
  }

 private:
  static Options Sanitize(Options options) {
    if (options.capacity == 0) options.capacity = 1;
    if (options.max_batch == 0) options.max_batch = 1;
    if (options.max_delay < absl::ZeroDuration()) options.max_delay = absl::ZeroDuration();
    return options;
  }

  bool ReadyLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stopping_ || queue_.size() >= options_.max_batch ||
           (flush_requests_ > 0 && !queue_.empty());
  }

  void Run() {
    while (true) {
      std::vector<T> batch;
      {
        absl::MutexLock lock(&mu_);
        // Sleep until there is something, then until the batch fills or its delay passes.
        while (!stopping_ && queue_.empty()) work_cv_.Wait(&mu_);
        const absl::Time deadline = absl::Now() + options_.max_delay;
        while (!ReadyLocked()) {
          if (work_cv_.WaitWithDeadline(&mu_, deadline)) break;  // true: timed out
        }
        if (queue_.empty()) {
          if (stopping_) return;
          continue;
        }
        const size_t n = std::min(queue_.size(), options_.max_batch);
        batch.reserve(n);
        for (size_t i = 0; i < n; ++i) {
          batch.push_back(std::move(queue_.front()));
          queue_.pop_front();
        }
      }
      const size_t n = batch.size();
      sink_(std::move(batch));
      absl::MutexLock lock(&mu_);
      completed_ += n;
      done_cv_.SignalAll();
    }
  }

  const Options options_;
  Sink sink_;  // used by the worker thread only

  mutable absl::Mutex mu_;
  absl::CondVar work_cv_;  // items arrived, a flush was asked for, or stopping
  absl::CondVar done_cv_;  // a batch went through the sink
  std::deque<T> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  int flush_requests_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t accepted_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t completed_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t dropped_ ABSL_GUARDED_BY(mu_) = 0;

  std::thread thread_;  // last: starts after everything above is initialized
};

}  // namespace brigade::telemetry

#endif  // BRIGADE_TELEMETRY_ASYNC_BATCH_WORKER_H_
