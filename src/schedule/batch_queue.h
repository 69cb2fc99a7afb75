#ifndef BRIGADE_SCHEDULE_BATCH_QUEUE_H_
#define BRIGADE_SCHEDULE_BATCH_QUEUE_H_

// BatchQueue: the pending requests of one model version and the rule that turns them into
// batches. Pure logic, no threads and no clock of its own: every decision takes `now_ns`, so the
// batching semantics are tested by stepping a fake clock (batch_queue_test.cc) and the threads
// around it (Scheduler) stay trivial.
//
// Semantics follow Triton's dynamic batcher:
//   - requests are taken highest priority level first (level 1 is highest), FIFO within a level;
//   - a batch holds whole requests whose rows add up to at most max_batch_size, and only requests
//     whose inputs agree on every non-batch dimension (the first request decides the shape);
//   - a batch is released at once when it is full (max_batch_size rows) or its size is one of the
//     preferred sizes and nothing compatible is left to add; otherwise it waits until the oldest
//     request has waited max_queue_delay_us, then goes with what it has (the largest preferred
//     size that fits, if any);
//   - without dynamic batching every request is its own batch, released at once.
// Requests whose deadline has passed, or whose client cancelled, are removed and handed back as
// expired so the caller answers them (DEADLINE_EXCEEDED / CANCELLED); they never reach a batch.
//
// Bound: at most `max_queue_size` requests are held; Push() beyond it refuses the request, which
// the caller answers UNAVAILABLE at once. Worst-case queueing delay of an admitted request with
// one instance is therefore about (max_queue_size / max_batch_size) batch executions plus
// max_queue_delay_us.
//
// Thread safety: none; the owner serializes access (Scheduler holds its mutex around every call).

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "core/infer_request.h"

namespace brigade::schedule {

struct BatchQueueOptions {
  // Rows per batch; 0 = the model has no batch dimension (each request is a batch of one).
  int max_batch_size = 0;
  bool dynamic_batching = false;
  std::vector<int> preferred_batch_sizes;
  int64_t max_queue_delay_us = 0;
  size_t max_queue_size = 1024;
  // Priority levels 1..priority_levels; requests with priority 0 get default_priority_level.
  int priority_levels = 1;
  int default_priority_level = 1;
};

struct QueuedRequest {
  std::unique_ptr<InferRequest> request;
  int64_t enqueue_ns = 0;
  int rows = 1;
};

class BatchQueue {
 public:
  explicit BatchQueue(BatchQueueOptions options);

  // Adds a request. On refusal (queue full) returns the request back to the caller untouched.
  std::unique_ptr<InferRequest> Push(std::unique_ptr<InferRequest> request, int64_t now_ns);

  struct Decision {
    // Requests to execute together now (empty = nothing to run yet).
    std::vector<QueuedRequest> batch;
    // Requests removed because their deadline passed or they were cancelled; answer them.
    std::vector<QueuedRequest> expired;
    // When to ask again if `batch` is empty: the earliest of the oldest request's delay expiry and
    // the earliest deadline. INT64_MAX when the queue is empty.
    int64_t wake_at_ns = INT64_MAX;
  };

  // Removes expired/cancelled requests and, if the rules above allow, one batch. `flush` releases
  // a batch without waiting for the delay or a preferred size (used while draining).
  Decision Next(int64_t now_ns, bool flush = false);

  // Removes every request (for shutdown); the caller answers them.
  std::vector<QueuedRequest> TakeAll();

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  int LevelOf(const InferRequest& request) const;
  bool Compatible(const InferRequest& a, const InferRequest& b) const;
  void CollectExpired(int64_t now_ns, std::vector<QueuedRequest>* expired);

  const BatchQueueOptions options_;
  // levels_[0] is priority level 1 (highest).
  std::vector<std::deque<QueuedRequest>> levels_;
  size_t size_ = 0;
};

// Rows a request contributes to a batch: dimension 0 of its first input when the model batches.
int RequestRows(const InferRequest& request, int max_batch_size);

}  // namespace brigade::schedule

#endif  // BRIGADE_SCHEDULE_BATCH_QUEUE_H_
