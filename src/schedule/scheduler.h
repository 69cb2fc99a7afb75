#ifndef BRIGADE_SCHEDULE_SCHEDULER_H_
#define BRIGADE_SCHEDULE_SCHEDULER_H_

// Scheduler: the queue and the instances of one loaded model version.
//
//   Enqueue ──► BatchQueue (bounded, priorities, batching rules)
//                   ▲  │ Next()
//                   │  ▼
//          instance threads (one per instance, pinned) ──► BatchRunner ──► request->Complete()
//
// Each instance thread owns one engine::ModelInstance, created and warmed up on that thread
// before Create() returns, so a model takes traffic only once every instance has run. Idle
// instance threads pull the next batch themselves (no separate batcher thread, so a request
// crosses exactly one thread boundary on its way in) and sleep on a condition variable until a
// request arrives or the batch delay / a deadline runs out.
//
// Thread safety: Enqueue, Drain and the accessors are safe from any thread.
// Ownership: the scheduler shares ownership of the engine::Model and the ModelStats; requests are
// owned by the queue until their batch runs. Answers are always delivered through
// InferRequest::Complete, never under the scheduler's lock.
// Failure: a full queue answers UNAVAILABLE at once; a draining scheduler answers UNAVAILABLE;
// requests whose deadline passes in the queue get DEADLINE_EXCEEDED, cancelled ones CANCELLED.
// Drain() (also run by the destructor) stops admission, runs everything already queued, then
// joins the threads: requests in flight on a version being replaced always finish.

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "core/clock.h"
#include "core/infer_request.h"
#include "engine/model.h"
#include "observe/model_stats.h"
#include "schedule/batch_queue.h"
#include "schedule/batch_runner.h"

namespace brigade::schedule {

class Scheduler {
 public:
  struct Options {
    std::string model_name;
    int64_t version = 1;
    BatchQueueOptions queue;
    int instance_count = 1;
    // CPUs to place instances on (see cpu_affinity.h); empty = all available. Pinning is skipped
    // when `pin_threads` is false.
    std::vector<int> cpus;
    bool pin_threads = true;
    // Compute threads per instance; 0 = available cores / instance_count (at least 1).
    int intra_op_threads = 0;
    // Input sets run on every instance before it takes traffic. A failing warm-up fails Create()
    // when `warmup_required`, and is logged otherwise.
    std::vector<std::vector<Tensor>> warmup_inputs;
    bool warmup_required = false;
    const Clock* clock = Clock::Real();
  };

  static absl::StatusOr<std::unique_ptr<Scheduler>> Create(
      Options options, std::shared_ptr<engine::Model> model,
      std::shared_ptr<observe::ModelStats> stats);
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
            std::shared_ptr<observe::ModelStats> stats);

  // Takes the request; always answers it (possibly before returning). Never blocks on the queue.
  void Enqueue(std::unique_ptr<InferRequest> request);

  // Stops admission, finishes queued and running work, joins the instance threads. Idempotent.
  void Drain();

  size_t queue_size() const;
  int intra_op_threads() const { return intra_op_threads_; }

 private:
  absl::Status StartInstances();
  void InstanceMain(int index, absl::Status* start_status);
  void ServeLoop(engine::ModelInstance* instance);
  void AnswerExpired(std::vector<QueuedRequest>& expired) const;

  const Options options_;
  const std::shared_ptr<engine::Model> model_;
  const std::shared_ptr<observe::ModelStats> stats_;
  const int intra_op_threads_;
  BatchRunner runner_;

  mutable absl::Mutex mu_;
  absl::CondVar work_cv_;   // a request arrived, or stopping
  absl::CondVar start_cv_;  // an instance finished starting
  BatchQueue queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  int started_instances_ ABSL_GUARDED_BY(mu_) = 0;
  // Serializes Drain() so concurrent callers never join the same thread twice.
  absl::Mutex drain_mu_;
  std::vector<std::thread> threads_ ABSL_GUARDED_BY(drain_mu_);
};

}  // namespace brigade::schedule

#endif  // BRIGADE_SCHEDULE_SCHEDULER_H_
