#include "scheduler/batch_runner.h"

#include <utility>

#include "absl/container/inlined_vector.h"
#include "core/status_macros.h"
#include "core/strings.h"
#include "protocol/failure_reason.h"

namespace brigade::scheduler {

BatchRunner::BatchRunner(std::string model_name, int64_t version, int max_batch_size,
                         const engine::ModelSignature* signature, telemetry::ModelStats* stats,
                         const Clock* clock, Respond respond,
                         telemetry::ModelRequestMetrics* metrics)
    : model_name_(std::move(model_name)),
      version_(std::to_string(version)),
      max_batch_size_(max_batch_size),
      signature_(signature),
      stats_(stats),
      clock_(clock),
      respond_(std::move(respond)),
      metrics_(metrics) {}

void BatchRunner::Answer(QueuedRequest& queued, absl::StatusOr<InferResponse> result) const {
  if (respond_ != nullptr) {
    respond_(queued, std::move(result));
  } else {
    queued.request->Complete(std::move(result));
  }
}

void BatchRunner::Run(engine::ModelInstance* instance, std::vector<QueuedRequest> batch) const {
  if (batch.empty()) return;
  const int64_t leave_ns = clock_->NowNs();
  for (QueuedRequest& queued : batch) {
    queued.request->clock.Mark(Stage::kQueueLeave, leave_ns);
    stats_->RecordQueue(leave_ns - queued.enqueue_ns);
  }
  absl::Status status = Execute(instance, batch);
  if (!status.ok()) Fail(batch, status);
}

void BatchRunner::Fail(std::vector<QueuedRequest>& batch, const absl::Status& status) const {
  for (QueuedRequest& queued : batch) {
    if (queued.request != nullptr && !queued.request->completed()) Answer(queued, status);
  }
}

absl::Status BatchRunner::Execute(engine::ModelInstance* instance,
                                  std::vector<QueuedRequest>& batch) const {
  const int64_t input_start_ns = clock_->NowNs();
  const size_t num_inputs = signature_->inputs.size();

  // Gather. One request: its tensors go straight to the backend. Inline, as the responses
  // below: a batch of one allocates neither.
  absl::InlinedVector<Tensor, 4> inputs;
  inputs.reserve(num_inputs);
  int rows = 0;
  for (const QueuedRequest& queued : batch) rows += queued.rows;
  if (batch.size() == 1) {
    for (const InferInput& input : batch[0].request->inputs) inputs.push_back(input.tensor);
  } else {
    std::vector<Tensor> parts(batch.size());
    for (size_t i = 0; i < num_inputs; ++i) {
      // An optional input the batch omits (the queue batches only requests that agree on it).
      if (batch[0].request->inputs[i].tensor.empty()) {
        inputs.emplace_back();
        continue;
      }
      for (size_t r = 0; r < batch.size(); ++r) parts[r] = batch[r].request->inputs[i].tensor;
      absl::StatusOr<Tensor> joined = ConcatRows(parts);
      if (!joined.ok()) {
        return absl::Status(joined.status().code(),
                            StrCat("model '", model_name_, "': batching input '",
                                   signature_->inputs[i].name, "': ", joined.status().message()));
      }
      inputs.push_back(*std::move(joined));
    }
  }

  const int64_t infer_start_ns = clock_->NowNs();
  for (QueuedRequest& queued : batch) {
    queued.request->clock.Mark(Stage::kInferStart, infer_start_ns);
  }
  std::vector<Tensor> outputs;
  if (metrics_ != nullptr) metrics_->busy_instances().Increment();
  const absl::Status executed = instance->Execute(inputs, &outputs);
  if (metrics_ != nullptr) metrics_->busy_instances().Decrement();
  // Failures of the model itself (here and its outputs below) count as Triton's BACKEND.
  if (!executed.ok()) {
    return protocol::WithFailureReason(executed, protocol::FailureReason::kBackend);
  }
  const int64_t infer_end_ns = clock_->NowNs();
  if (metrics_ != nullptr) metrics_->RecordBatch(rows);
  inputs.clear();  // release batch buffers before building responses

  if (outputs.size() != signature_->outputs.size()) {
    return protocol::WithFailureReason(
        absl::InternalError(StrCat("model '", model_name_, "' returned ", outputs.size(),
                                   " outputs, its signature declares ",
                                   signature_->outputs.size())),
        protocol::FailureReason::kBackend);
  }
  const bool batched = max_batch_size_ > 0;
  for (size_t o = 0; o < outputs.size(); ++o) {
    if (batched && (outputs[o].shape().empty() || outputs[o].shape()[0] != rows)) {
      return protocol::WithFailureReason(
          absl::InternalError(StrCat(
              "model '", model_name_, "' output '", signature_->outputs[o].name, "' has shape ",
              ShapeToString(outputs[o].shape()), " for a batch of ", rows, " rows")),
          protocol::FailureReason::kBackend);
    }
  }

  // Scatter: row ranges per request, outputs in the order each request asked for.
  absl::InlinedVector<InferResponse, 1> responses(batch.size());
  int64_t row = 0;
  for (size_t r = 0; r < batch.size(); ++r) {
    const InferRequest& request = *batch[r].request;
    InferResponse& response = responses[r];
    response.model_name = model_name_;
    response.model_version = version_;
    response.id = request.id;
    response.execution.batch_size = rows;
    auto add_output = [&](size_t o) -> absl::Status {
      Tensor tensor = outputs[o];
      if (batched && batch.size() > 1) {
        BRIGADE_ASSIGN_OR_RETURN(tensor, outputs[o].SliceRows(row, batch[r].rows));
      }
      response.outputs.push_back({signature_->outputs[o].name, std::move(tensor), {}});
      return absl::OkStatus();
    };
    if (request.outputs.empty()) {
      for (size_t o = 0; o < outputs.size(); ++o) BRIGADE_RETURN_IF_ERROR(add_output(o));
    } else {
      for (const RequestedOutput& wanted : request.outputs) {
        size_t o = 0;
        while (o < outputs.size() && signature_->outputs[o].name != wanted.name) ++o;
        if (o == outputs.size()) {
          return absl::InvalidArgumentError(
              StrCat("model '", model_name_, "' has no output named '", wanted.name, "'"));
        }
        BRIGADE_RETURN_IF_ERROR(add_output(o));
      }
    }
    row += batch[r].rows;
  }
  const int64_t output_end_ns = clock_->NowNs();
  stats_->RecordExecution(rows, static_cast<int>(batch.size()), infer_start_ns - input_start_ns,
                          infer_end_ns - infer_start_ns, output_end_ns - infer_end_ns);

  for (size_t r = 0; r < batch.size(); ++r) {
    InferRequest& request = *batch[r].request;
    request.clock.Mark(Stage::kInferEnd, infer_end_ns);
    request.clock.Mark(Stage::kPostprocessed, output_end_ns);
    responses[r].clock = request.clock;
    Answer(batch[r], std::move(responses[r]));
  }
  return absl::OkStatus();
}

}  // namespace brigade::scheduler
