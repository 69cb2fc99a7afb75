#ifndef BRIGADE_SCHEDULER_BATCH_RUNNER_H_
#define BRIGADE_SCHEDULER_BATCH_RUNNER_H_

// BatchRunner: executes one batch of requests on one ModelInstance and answers every request in
// it. The three timed steps are Triton's compute_input / compute_infer / compute_output:
//
//   gather   concatenate each input along dimension 0 (a batch of one request is passed through
//            without a copy; an optional input the batch omits stays an empty tensor)
//                                                                      (t2 = infer start after it)
//   execute  ModelInstance::Execute                                     (t3 = infer end)
//   scatter  slice each output per request (views, no copy) and keep only the outputs each
//            request asked for                                          (t4 = postprocessed)
//
// Requests reach the runner validated: inputs in signature order, dtypes and non-batch dims as
// the model declares, requested outputs known (server/request_validator.h guarantees it).
// Answers go through `respond` (the Scheduler routes them through its ResponseOrderer when the
// model preserves ordering); without one, straight to InferRequest::Complete.
//
// Every answered response carries ExecutionInfo::batch_size (the rows of the batch it ran in).
// With a metrics handle, the runner moves its busy-instances gauge around each Execute and
// records every executed batch's rows (RecordBatch).
//
// Thread safety: Run() may be called concurrently from several instance threads (each with its
// own instance); the runner itself is immutable. `signature`, `stats`, `clock` and `metrics`
// (may be null) are borrowed and must outlive the runner. Failure: an error in
// gather/execute/scatter answers every request of the batch with that error (naming the model);
// other batches are unaffected.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/clock.h"
#include "engine/model.h"
#include "scheduler/batch_queue.h"
#include "telemetry/model_stats.h"
#include "telemetry/request_metrics.h"

namespace brigade::scheduler {

class BatchRunner {
 public:
  // Answers one request of a batch; takes ownership of queued.request (may leave it null).
  using Respond = std::function<void(QueuedRequest& queued, absl::StatusOr<InferResponse> result)>;

  BatchRunner(std::string model_name, int64_t version, int max_batch_size,
              const engine::ModelSignature* signature, telemetry::ModelStats* stats,
              const Clock* clock, Respond respond = nullptr,
              telemetry::ModelRequestMetrics* metrics = nullptr);

  void Run(engine::ModelInstance* instance, std::vector<QueuedRequest> batch) const;

 private:
  absl::Status Execute(engine::ModelInstance* instance, std::vector<QueuedRequest>& batch) const;
  void Answer(QueuedRequest& queued, absl::StatusOr<InferResponse> result) const;
  void Fail(std::vector<QueuedRequest>& batch, const absl::Status& status) const;

  const std::string model_name_;
  const std::string version_;
  const int max_batch_size_;
  const engine::ModelSignature* signature_;
  telemetry::ModelStats* stats_;
  const Clock* clock_;
  const Respond respond_;
  telemetry::ModelRequestMetrics* const metrics_;
};

}  // namespace brigade::scheduler

#endif  // BRIGADE_SCHEDULER_BATCH_RUNNER_H_
