#ifndef BRIGADE_SCHEDULER_SCHEDULER_H_
#define BRIGADE_SCHEDULER_SCHEDULER_H_

// Scheduler: the queue and the instances of one loaded model version.
//
//   Enqueue ──► BatchQueue (bounded, priorities, queue policies, admission control)
//                   ▲  │ Next(): the BatchPolicy decides size and wait
//                   │  ▼
//          instance threads (one per instance, pinned) ──► BatchRunner ──► [ResponseOrderer] ──►
//                                                                          request->Complete()
//          timer thread: removes requests when their timeout passes or their client cancels
//
// Each instance thread owns one engine::ModelInstance, created and warmed up on that thread
// before Create() returns, so a model takes traffic only once every instance has run. Idle
// instance threads pull the next batch themselves (no separate batcher thread, so a request
// crosses exactly one thread boundary on its way in) and sleep on a condition variable until a
// request arrives or the policy's wait runs out. Every executed batch's service time feeds the
// latency profile (load_tracker.h) that the adaptive policies and admission control predict
// with.
//
// Run to completion (Options::run_inline_max_us > 0): a request that finds the queue empty, an
// instance idle whose backend allows any thread (ModelInstance::RunsOnAnyThread) and a policy
// that releases it at once runs on the thread that enqueued it — the front end's io thread —
// and is answered there: no wake-up of an instance thread, no hand-off back. The instance is
// lent, not shared: its own thread neither takes work nor exits until it is returned. Only
// batches the profile predicts to finish within run_inline_max_us (p99) run inline, so a slow
// model never holds an io thread away from its other connections; nothing runs inline before
// the profile knows the model. Queueing, priorities (the queue was empty), deadlines, admission
// control, cancellation, ordering and the stage clock are the same on both paths.
//
// The timer thread is off the request path: it sleeps until the earliest queue timeout and, while
// requests carrying a cancel flag are queued, at most `cancel_poll_us`; it removes timed-out and
// cancelled requests even while every instance is busy, so a timeout or a client's cancellation
// frees the queue slot and is answered when it happens, not when a batch next forms.
//
// Thread safety: Enqueue, Drain, Snapshot and the accessors are safe from any thread.
// Ownership: the scheduler shares ownership of the engine::Model and the ModelStats; requests are
// owned by the queue until their batch runs. Answers are always delivered through
// InferRequest::Complete, never under the scheduler's lock.
// Create() fails with INVALID_ARGUMENT for options past kMaxInstanceCount or kMaxBatchSize, with
// an instance's own error when it fails to start or to warm up, and with RESOURCE_EXHAUSTED when
// the system refuses a thread or memory runs out (std::bad_alloc) while instances start or warm
// up: every thread it started is joined first, so a failed Create leaves nothing running and
// fails only the load that asked for it.
// Request failures (all answered through the request's callback, at once unless noted):
//   UNAVAILABLE        the queue or the request's priority level is full; admission control
//                      predicts the request would miss its deadline/SLO; the scheduler drains.
//                      Overload refusals carry a retry-after (protocol/error_payload.h).
//   DEADLINE_EXCEEDED  the deadline had passed on arrival, or passed in the queue (REJECT
//                      policy), answered when it passes.
//   CANCELLED          the client cancelled while the request was queued or before its batch
//                      started (its work is skipped).
// Drain() (also run by the destructor) stops admission, runs everything already queued, then
// joins the threads: requests in flight on a version being replaced always finish.

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "core/clock.h"
#include "core/infer_request.h"
#include "engine/model.h"
#include "scheduler/batch_queue.h"
#include "scheduler/batch_runner.h"
#include "scheduler/response_orderer.h"
#include "scheduler/scheduler_stats.h"
#include "telemetry/model_stats.h"
#include "telemetry/request_metrics.h"

namespace brigade::scheduler {

// One warm-up: inputs (in signature order) run on every instance before it takes traffic, and
// what messages call it (the config's model_warmup name).
struct WarmupRun {
  std::string name;
  std::vector<Tensor> inputs;
  // A failing run fails Create() when set (or when Options::warmup_required is); otherwise the
  // failure is logged and the instance serves anyway.
  bool required = false;
};

class Scheduler {
 public:
  struct Options {
    std::string model_name;
    int64_t version = 1;
    BatchQueueOptions queue;
    // Answer requests in admission order, whichever instance runs them (Triton's
    // preserve_ordering). Errors from the queue (timeouts, cancellations) are not held back.
    bool preserve_ordering = false;
    int instance_count = 1;
    // CPUs to place instances on (see cpu_affinity.h); empty = all available. Pinning is skipped
    // when `pin_threads` is false.
    std::vector<int> cpus;
    bool pin_threads = true;
    // Compute threads per instance; 0 = available cores / instance_count (at least 1).
    int intra_op_threads = 0;
    // Longest time a cancelled request stays queued: the timer checks cancel flags this often
    // while any queued request has one. 0 = only at batch decisions.
    int64_t cancel_poll_us = 1000;
    // Run in order on every instance before it takes traffic. A failing warm-up fails Create()
    // when `warmup_required` or its own `required` is set, and is logged otherwise; a warm-up
    // without a name is called by its index.
    std::vector<WarmupRun> warmups;
    bool warmup_required = false;
    const Clock* clock = Clock::Real();
    // Live metrics of this version (may be null): the queue-length gauge moves with the queue on
    // every admission and removal, busy-instances moves around each Execute, and every executed
    // batch's rows are recorded. Borrowed; must outlive the scheduler.
    telemetry::ModelRequestMetrics* metrics = nullptr;
    // Starts each of the scheduler's threads (instances, timer); null means std::thread. Tests
    // inject one that throws, as std::thread does when the system refuses a thread.
    std::function<std::thread(std::function<void()>)> start_thread;
    // Run to completion (see above): the longest predicted p99 service time of a batch run on
    // the enqueuing thread. 0 = every batch runs on an instance thread.
    int64_t run_inline_max_us = 0;
  };

  // Create() refuses options past these (the model config's validation refuses configs past them
  // first): every instance is a thread, and the statistics keep a row per batch size.
  static constexpr int kMaxInstanceCount = 256;
  static constexpr int kMaxBatchSize = 65536;

  static absl::StatusOr<std::unique_ptr<Scheduler>> Create(
      Options options, std::shared_ptr<engine::Model> model,
      std::shared_ptr<telemetry::ModelStats> stats);
  ~Scheduler();

  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Use Create(); the tag keeps construction inside this class while allowing make_unique.
  struct ConstructionTag {
   private:
    friend class Scheduler;
    ConstructionTag() = default;
  };
  Scheduler(ConstructionTag, Options options, std::shared_ptr<engine::Model> model,
            std::shared_ptr<telemetry::ModelStats> stats);

  // Takes the request; always answers it (possibly before returning). Never blocks on the queue.
  void Enqueue(std::unique_ptr<InferRequest> request);

  // Stops admission, finishes queued and running work, joins the threads. Idempotent.
  void Drain();

  size_t queue_size() const;
  // BatchQueue::PredictCompletionNs for a request of `rows` rows arriving now.
  int64_t PredictCompletionNs(int rows) const;
  int intra_op_threads() const { return intra_op_threads_; }
  // Counters, histograms, live load signals and the latency profile (see scheduler_stats.h).
  SchedulerSnapshot Snapshot() const;

 private:
  // Starts the instance threads and the timer, and waits for every instance that started to be
  // ready; a thread the system refuses (std::system_error) or memory running out fails it with
  // RESOURCE_EXHAUSTED, once the threads that did start have reported.
  absl::Status StartInstances();
  std::thread StartThread(std::function<void()> body) const;
  void InstanceMain(int index, absl::Status* start_status);
  // Pins the thread, creates the instance and runs the warm-ups on it; may throw (the backend's
  // allocations), which InstanceMain catches.
  void StartInstance(int index, std::unique_ptr<engine::ModelInstance>* instance,
                     absl::Status* status);
  void ServeLoop(int index, engine::ModelInstance* instance);
  // One instance as Enqueue sees it for lending (run to completion).
  struct InstanceSlot {
    engine::ModelInstance* instance = nullptr;  // set while its thread serves
    bool lendable = false;                      // RunsOnAnyThread() and lending is on
    bool waiting = false;  // its thread sleeps on `wake` and no one has signalled it yet
    bool idle = false;     // ... and for a request, not for a policy's timer
    bool lent = false;     // a caller runs batches on it now; its thread keeps off it
    // Its thread's own wake-up: a request for it, or stopping. One per thread, so a signal
    // never lands on a thread that cannot act on it (a lent one).
    absl::CondVar wake;
  };
  // A batch released for a lent instance, to run on the enqueuing thread.
  struct Loan {
    int index = -1;
    engine::ModelInstance* instance = nullptr;
    BatchQueue::Decision decision;
  };
  // With the queue holding only the request just pushed (`rows` rows): lends an idle lendable
  // instance whose predicted p99 for `rows` fits run_inline_max_us, if the policy releases a
  // batch for it now. Returns a loan with index -1 otherwise (the request stays queued, and
  // anything the decision removed is in `removed`).
  Loan TryLend(int rows, int64_t now_ns, std::vector<QueuedRequest>* removed)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Runs the loan's batch on the calling thread, then what queued meanwhile while it is predicted
  // short and the loan is younger than run_inline_max_us; then returns the instance.
  void RunLoan(Loan loan);
  // Wakes one waiting, not lent instance thread for queued work (none when none waits).
  void SignalWork() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Wakes every instance thread (stopping).
  void SignalAllInstances() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void TimerLoop();
  // Answers requests removed from the queue (timed out / cancelled) and releases their order.
  void AnswerRemoved(std::vector<QueuedRequest>& removed);
  // When each request of a batch was expected answered (QueuedRequest::expected_done_ns).
  using ExpectedDone = absl::InlinedVector<int64_t, 32>;
  // Runs `decision.batch` minus requests cancelled meanwhile; returns the rows executed and
  // adds the executed requests' expected answer times to `expected` (for the lateness that SLO
  // routing's prediction adds, measured once their answers are out).
  int RunBatch(engine::ModelInstance* instance, std::vector<QueuedRequest> batch,
               ExpectedDone* expected);
  void Respond(QueuedRequest& queued, absl::StatusOr<InferResponse> result);
  absl::Status RefusalStatus(const BatchQueue::Admission& admission, int64_t now_ns) const;
  // Sets the queue-length gauge (if any) to the queue's size; call after the queue changed.
  void PublishQueueLength() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  const std::shared_ptr<engine::Model> model_;
  const std::shared_ptr<telemetry::ModelStats> stats_;
  const int intra_op_threads_;
  BatchRunner runner_;
  ResponseOrderer orderer_;

  mutable absl::Mutex mu_;
  absl::CondVar start_cv_;  // an instance finished starting
  absl::CondVar timer_cv_;  // an earlier timeout or a first cancellable request, or stopping
  BatchQueue queue_ ABSL_GUARDED_BY(mu_);
  SchedulerStats decisions_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  int started_instances_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<InstanceSlot> slots_ ABSL_GUARDED_BY(mu_);
  int lent_ ABSL_GUARDED_BY(mu_) = 0;  // slots with `lent`
  // The queue length last added to the metrics gauge.
  int64_t published_queue_length_ ABSL_GUARDED_BY(mu_) = 0;
  // When the timer thread will next look at the queue (INT64_MAX: only when signalled).
  int64_t timer_wake_ns_ ABSL_GUARDED_BY(mu_) = INT64_MAX;
  // Serializes Drain() so concurrent callers never join the same thread twice.
  absl::Mutex drain_mu_;
  std::vector<std::thread> threads_ ABSL_GUARDED_BY(drain_mu_);
  std::thread timer_thread_ ABSL_GUARDED_BY(drain_mu_);
};

}  // namespace brigade::scheduler

#endif  // BRIGADE_SCHEDULER_SCHEDULER_H_
