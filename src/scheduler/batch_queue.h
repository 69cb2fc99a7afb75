#ifndef BRIGADE_SCHEDULER_BATCH_QUEUE_H_
#define BRIGADE_SCHEDULER_BATCH_QUEUE_H_

// BatchQueue: the pending requests of one model version, the queue policies that admit and time
// them out, and the batch policy that turns them into batches. Pure logic, no threads and no
// clock of its own: every call takes `now_ns`, so the semantics are tested by stepping a fake
// clock (batch_queue_test.cc) and the threads around it (Scheduler) stay simple.
//
// Semantics follow Triton's dynamic batcher and queue policies:
//   - priority levels 1..priority_levels (1 is highest, strict): a batch is led by the oldest
//     request of the highest non-empty level and filled in level order, FIFO within a level;
//     priority 0, or a level above priority_levels, means default_priority_level (as Triton);
//   - each level has a queue policy (priority_queue_policy[level], else default_queue_policy):
//       max_queue_size          a full level refuses the request at once (0 = only the
//                               queue-wide bound, which always applies: nothing is unbounded);
//       default_timeout_us      the level's queue timeout (0 = none);
//       allow_timeout_override  whether the request's own deadline (InferRequest::deadline: its
//                               `timeout` parameter or the transport's deadline) applies. With a
//                               default timeout and no override the request's deadline is
//                               ignored, as in Triton; with no default timeout the request's
//                               deadline always applies (Triton ignores it then — we don't: a
//                               client-set timeout that does nothing is a trap);
//       timeout_action          REJECT: the request leaves the queue when its timeout passes
//                               (Expire(), driven by the scheduler's timer) and is answered
//                               DEADLINE_EXCEEDED; DELAY: it moves behind every non-delayed
//                               request of its level and runs later, never rejected.
//   - a batch holds whole requests whose rows add up to at most max_batch_size, and only requests
//     whose inputs agree on every non-batch dimension and type and that give the same optional
//     inputs (an omitted one is an empty tensor; the first request decides);
//   - when to release the candidate batch, and how much of it, is the BatchPolicy's choice
//     (batch_policy.h): FixedDelayPolicy reproduces Triton (full or preferred sizes at once,
//     otherwise after max_queue_delay_us, cut to the largest preferred size that fits);
//   - without dynamic batching every request is its own batch, released at once;
//   - admission control (optional): a request whose predicted p99 completion (the policy's
//     PredictCompletionNs over the rows ahead of it) is later than its deadline or its SLO
//     (enqueue + target_p99_us) is refused at once instead of being served late;
//   - cancelled requests are removed at the next Expire() or Next() and never reach a batch.
//
// Bound: at most `max_queue_size` requests over all levels, and each level's own max. Worst-case
// queueing delay of an admitted request with one instance is about
// (max_queue_size / max_batch_size) batch executions plus the policy's wait, unless admission
// control or a timeout cuts it shorter.
//
// Thread safety: none; the owner serializes access (Scheduler holds its mutex around every call).

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <vector>

#include "core/deadline.h"
#include "core/infer_request.h"
#include "scheduler/batch_policy.h"
#include "scheduler/load_tracker.h"

namespace brigade::scheduler {

// Triton's ModelQueuePolicy for one priority level.
struct QueuePolicy {
  enum class TimeoutAction : uint8_t { kReject, kDelay };
  TimeoutAction timeout_action = TimeoutAction::kReject;
  int64_t default_timeout_us = 0;
  bool allow_timeout_override = false;
  size_t max_queue_size = 0;
};

enum class BatchPolicyKind : uint8_t { kFixedDelay, kQueueFormula, kP99Model };

struct BatchQueueOptions {
  // Rows per batch; 0 = the model has no batch dimension (each request is a batch of one).
  int max_batch_size = 0;
  bool dynamic_batching = false;
  std::vector<int> preferred_batch_sizes;
  int64_t max_queue_delay_us = 0;
  // Queue-wide bound over every level.
  size_t max_queue_size = 1024;
  // Priority levels 1..priority_levels; requests with priority 0 get default_priority_level.
  int priority_levels = 1;
  int default_priority_level = 1;
  QueuePolicy default_queue_policy;
  // Per level (1-based); levels not listed use default_queue_policy.
  std::map<int, QueuePolicy> priority_queue_policy;

  // Brigade's adaptive batching (used when dynamic batching is on).
  BatchPolicyKind policy = BatchPolicyKind::kFixedDelay;
  // The SLO the adaptive policies and admission control aim at; 0 = none.
  int64_t target_p99_us = 0;
  // Rows cap for the adaptive policies; 0 = max_batch_size.
  int adaptive_max_batch_size = 0;
  bool admission_control = false;
  // Instances pulling from this queue (for the load signals).
  int instances = 1;
  int64_t profile_half_life_us = 5'000'000;
};

struct QueuedRequest {
  std::unique_ptr<InferRequest> request;
  int64_t enqueue_ns = 0;
  int rows = 1;
  // 0-based priority level.
  int level = 0;
  // When the level's timeout action applies; infinite when none.
  Deadline deadline;
  // What the batch policy must meet: deadline (under REJECT) or enqueue + target p99.
  int64_t slo_deadline_ns = INT64_MAX;
  // Admission order (preserve_ordering).
  uint64_t sequence = 0;
  // Timed out under a DELAY policy.
  bool delayed = false;
  // The predicted p99 completion at admission, moved back by the time the request spent before
  // the queue (since its front end's arrival mark): when its answer would be on time for a
  // prediction that counted from arrival. -1: no prediction (LoadTracker::OnAnswered).
  int64_t expected_done_ns = -1;
};

// Why Push() handed a request back.
enum class Refusal : uint8_t {
  kNone = 0,
  kQueueFull,      // the queue-wide bound
  kLevelFull,      // the level's max_queue_size
  kExpired,        // its deadline had passed on arrival (REJECT)
  kPredictedLate,  // admission control
};

class BatchQueue {
 public:
  // `policy` overrides the one `options` names (tests inject their own); null = from options.
  explicit BatchQueue(BatchQueueOptions options, std::unique_ptr<BatchPolicy> policy = nullptr);

  struct Admission {
    // The request handed back untouched when refused; null when admitted.
    std::unique_ptr<InferRequest> refused;
    Refusal refusal = Refusal::kNone;
    // Admission control's prediction (absolute ns); -1 when not predicted.
    int64_t predicted_completion_ns = -1;
    // The deadline admission control compared with (absolute ns; INT64_MAX none).
    int64_t admission_deadline_ns = INT64_MAX;
    // The admitted request's timeout instant (INT64_MAX none), for the owner's timer.
    int64_t deadline_ns = INT64_MAX;
    int level = 0;
  };
  Admission Push(std::unique_ptr<InferRequest> request, int64_t now_ns);
  // What admission control would predict for a request of `rows` rows arriving now behind
  // everything queued (absolute p99 completion, Clock ns), plus the recent p99 of how late
  // answers came against that prediction (LoadTracker::lateness_p99_ns: what the queue and the
  // profile do not see); -1 when the profile cannot tell yet. Queues nothing; for routers
  // choosing among variants by SLO.
  int64_t PredictCompletionNs(int rows, int64_t now_ns) const;

  struct Decision {
    // Requests to execute together now (empty = nothing to run yet).
    std::vector<QueuedRequest> batch;
    // Requests removed because their timeout passed (REJECT) or they were cancelled.
    std::vector<QueuedRequest> expired;
    // When `batch` is empty: when to ask again (INT64_MAX = when something arrives).
    int64_t wake_at_ns = INT64_MAX;
    // The explanation of the released batch.
    BatchReason reason = BatchReason::kWait;
    int rows = 0;
    int64_t predicted_p50_ns = 0;  // 0 = no prediction
    int64_t predicted_p99_ns = 0;
    int64_t oldest_wait_ns = 0;
  };

  // Expire(), then — if the policy says so — one batch for `instance`. `flush` releases without
  // waiting (draining).
  Decision Next(int64_t now_ns, bool flush = false, int instance = -1);

  // Removes timed-out (REJECT) and cancelled requests and moves timed-out DELAY requests behind
  // their level. Returns the removed ones for the caller to answer.
  std::vector<QueuedRequest> Expire(int64_t now_ns);

  // The earliest timeout among queued, not yet delayed requests (INT64_MAX none); may be earlier
  // than the truth after requests left in a batch (a spurious wake-up costs one Expire()).
  int64_t next_expiry_ns() const { return next_expiry_ns_; }
  // Queued requests that carry a cancel flag (worth polling for).
  size_t cancellable() const { return cancellable_; }

  // A batch released by Next() for `instance` finished after `duration_ns` of service.
  void OnBatchDone(int instance, int rows, int64_t duration_ns, int64_t now_ns);

  // Removes every request (for shutdown); the caller answers them.
  std::vector<QueuedRequest> TakeAll();

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Requests queued at 1-based `level` (delayed ones included).
  size_t level_size(int level) const;
  uint64_t delayed_total() const { return delayed_total_; }
  const BatchPolicy& policy() const { return *policy_; }
  const LoadTracker& load() const { return load_; }
  LoadTracker& mutable_load() { return load_; }
  // Row limit the policy works with.
  int batch_limit() const { return batch_limit_; }

 private:
  struct Level {
    QueuePolicy policy;
    std::deque<QueuedRequest> waiting;
    std::deque<QueuedRequest> delayed;
    int rows = 0;
    size_t size() const { return waiting.size() + delayed.size(); }
  };
  // Position of a candidate: level, which deque, index.
  struct Slot {
    size_t level;
    bool delayed;
    size_t index;
  };

  int LevelOf(const InferRequest& request) const;
  bool Compatible(const InferRequest& a, const InferRequest& b) const;
  QueuedRequest& At(const Slot& slot);
  void Forget(const QueuedRequest& queued);

  const BatchQueueOptions options_;
  const bool batching_;
  const int batch_limit_;
  std::unique_ptr<BatchPolicy> policy_;
  LoadTracker load_;
  std::vector<Level> levels_;  // levels_[0] is priority level 1 (highest)
  size_t size_ = 0;
  size_t cancellable_ = 0;
  int64_t next_expiry_ns_ = INT64_MAX;
  uint64_t next_sequence_ = 0;
  uint64_t delayed_total_ = 0;
};

// Rows a request contributes to a batch: dimension 0 of its first given input when the model
// batches.
int RequestRows(const InferRequest& request, int max_batch_size);

// The policy `options` names.
std::unique_ptr<BatchPolicy> MakeBatchPolicy(const BatchQueueOptions& options);

}  // namespace brigade::scheduler

#endif  // BRIGADE_SCHEDULER_BATCH_QUEUE_H_
