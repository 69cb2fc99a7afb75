#include "engine/onnx/exec/session.h"

#include <omp.h>

#include "core/status_macros.h"
#include "core/strings.h"
#include "engine/onnx/exec/batch_split.h"
#include "engine/onnx/exec/planner.h"

namespace brigade::engine::onnx {

absl::StatusOr<std::unique_ptr<Session>> Session::Create(std::shared_ptr<const CompiledModel> model,
                                                         Options options) {
  if (options.threads < 1) return absl::InvalidArgumentError("Session needs at least one thread");
  if (options.max_plans < 1) options.max_plans = 1;
  try {
    dnnl::stream stream(model->engine());
    // Automatic splitting only on one thread: with more, each extra chunk adds a barrier per
    // layer, and measured here (2 threads, batch 8) it made ResNet-50 and MobileNetV2 slower.
    const size_t split_budget_bytes =
        options.split_budget_bytes.value_or(options.threads == 1 ? DefaultSplitBudgetBytes() : 0);
    return std::make_unique<Session>(Token{}, std::move(model), options, std::move(stream),
                                     split_budget_bytes);
  } catch (const dnnl::error& e) {
    return absl::InternalError(StrCat("oneDNN stream: ", e.what()));
  }
}

absl::Status Session::ValidateInputs(std::span<const Tensor> inputs) const {
  const Graph& graph = model_->graph();
  if (inputs.size() != graph.inputs().size()) {
    return absl::InvalidArgumentError(StrCat("model '", model_->name(), "' expects ",
                                             graph.inputs().size(), " inputs, got ",
                                             inputs.size()));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& spec = graph.value(graph.inputs()[i]);
    const Tensor& t = inputs[i];
    if (t.dtype() != spec.dtype) {
      return absl::InvalidArgumentError(StrCat("model '", model_->name(), "': input '", spec.name,
                                               "' must be ", DataTypeName(spec.dtype), ", got ",
                                               DataTypeName(t.dtype())));
    }
    if (!spec.shape.has_value()) continue;
    const Shape& want = *spec.shape;
    bool ok = want.size() == t.shape().size();
    for (size_t d = 0; ok && d < want.size(); ++d) ok = want[d] < 0 || want[d] == t.shape()[d];
    if (!ok) {
      return absl::InvalidArgumentError(StrCat("model '", model_->name(), "': input '", spec.name,
                                               "' must have shape ", ShapeToString(want), ", got ",
                                               ShapeToString(t.shape())));
    }
  }
  return absl::OkStatus();
}

void Session::MakeKey(std::span<const Tensor> inputs, std::vector<int64_t>* key) const {
  key->clear();
  const auto& shape_inputs = model_->shape_inputs();
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    key->push_back(static_cast<int64_t>(t.dtype()));
    key->push_back(static_cast<int64_t>(t.shape().size()));
    key->insert(key->end(), t.shape().begin(), t.shape().end());
    if (shape_inputs[i]) {
      // Contents decide shapes: include every byte (these tensors are tiny in practice).
      const auto bytes = t.bytes();
      for (size_t b = 0; b < bytes.size(); ++b) key->push_back(static_cast<int64_t>(bytes[b]));
    }
  }
}

absl::StatusOr<ExecutionPlan*> Session::PlanFor(std::span<const Tensor> inputs) {
  MakeKey(inputs, &key_);
  auto it = plans_.find(key_);
  if (it == plans_.end()) {
    auto plan_or = BuildPlan(*model_, inputs, options_.threads, stream_);
    if (!plan_or.ok()) {
      return absl::Status(plan_or.status().code(),
                          StrCat("model '", model_->name(), "': ", plan_or.status().message()));
    }
    if ((*plan_or)->arena_bytes > options_.max_arena_bytes) {
      return absl::ResourceExhaustedError(
          StrCat("model '", model_->name(), "': inputs of shape ", ShapeToString(inputs[0].shape()),
                 " need ", (*plan_or)->arena_bytes >> 20, " MiB of intermediates, over the ",
                 options_.max_arena_bytes >> 20, " MiB limit"));
    }
    (*plan_or)->max_continuation_arena_bytes = options_.max_arena_bytes;
    if (plans_.size() >= options_.max_plans) {
      plans_.erase(lru_.back());
      lru_.pop_back();
    }
    lru_.push_front(key_);
    it = plans_.emplace(key_, Entry{std::move(*plan_or), lru_.begin()}).first;
    const size_t need = it->second.plan->arena_bytes;
    if (need > arena_.byte_size()) {
      BRIGADE_ASSIGN_OR_RETURN(
          arena_, Tensor::Allocate(DataType::kUint8, Shape{static_cast<int64_t>(need)}));
    }
  } else if (it->second.lru != lru_.begin()) {
    lru_.splice(lru_.begin(), lru_, it->second.lru);
  }
  return it->second.plan.get();
}

absl::Status Session::RunPlan(ExecutionPlan& plan, std::span<const Tensor> inputs,
                              std::vector<Tensor>* outputs) {
  if (last_plan_ != &plan) step_ns_.clear();
  last_plan_ = &plan;
  absl::Status status = plan.Run(inputs, arena_.mutable_data(), stream_, options_.threads, outputs,
                                 options_.profile ? &step_ns_ : nullptr);
  if (!status.ok()) {
    return absl::Status(status.code(), StrCat("model '", model_->name(), "': ", status.message()));
  }
  return absl::OkStatus();
}

int64_t Session::ChunkRowsFor(std::span<const Tensor> inputs) {
  const int64_t batch = inputs.empty() || inputs[0].shape().empty() ? 0 : inputs[0].shape()[0];
  if (batch <= 1 || split_budget_bytes_ == 0 || !model_->rows_independent()) return batch;
  chunk_inputs_.clear();
  for (const Tensor& t : inputs) {
    if (t.shape().empty() || t.shape()[0] != batch) return batch;
    absl::StatusOr<Tensor> row = t.SliceRows(0, 1);
    if (!row.ok()) return batch;
    chunk_inputs_.push_back(*std::move(row));
  }
  // A plan failure here resurfaces, with its message, when the whole batch is planned.
  absl::StatusOr<ExecutionPlan*> row_plan = PlanFor(chunk_inputs_);
  if (!row_plan.ok()) return batch;
  return ChunkRows(batch, (*row_plan)->arena_bytes, split_budget_bytes_);
}

absl::Status Session::RunSplit(std::span<const Tensor> inputs, int64_t chunk_rows,
                               std::vector<Tensor>* outputs) {
  const int64_t batch = inputs[0].shape()[0];
  const size_t chunks = static_cast<size_t>(batch / chunk_rows);
  if (chunk_outputs_.size() < chunks) chunk_outputs_.resize(chunks);
  int64_t flops = 0;
  for (size_t c = 0; c < chunks; ++c) {
    chunk_inputs_.clear();
    for (const Tensor& t : inputs) {
      BRIGADE_ASSIGN_OR_RETURN(Tensor part,
                               t.SliceRows(static_cast<int64_t>(c) * chunk_rows, chunk_rows));
      chunk_inputs_.push_back(std::move(part));
    }
    BRIGADE_ASSIGN_OR_RETURN(ExecutionPlan * plan, PlanFor(chunk_inputs_));
    BRIGADE_RETURN_IF_ERROR(RunPlan(*plan, chunk_inputs_, &chunk_outputs_[c]));
    flops += plan->total_flops;
  }
  outputs->clear();
  std::vector<Tensor> parts(chunks);
  for (size_t j = 0; j < chunk_outputs_[0].size(); ++j) {
    for (size_t c = 0; c < chunks; ++c) parts[c] = std::move(chunk_outputs_[c][j]);
    BRIGADE_ASSIGN_OR_RETURN(Tensor joined, ConcatRows(parts));
    outputs->push_back(std::move(joined));
  }
  chunk_inputs_.clear();
  last_run_flops_ = flops;
  last_chunk_rows_ = chunk_rows;
  return absl::OkStatus();
}

absl::Status Session::Run(std::span<const Tensor> inputs, std::vector<Tensor>* outputs) {
  BRIGADE_RETURN_IF_ERROR(ValidateInputs(inputs));
  omp_set_num_threads(options_.threads);
  const int64_t chunk_rows = ChunkRowsFor(inputs);
  chunk_inputs_.clear();
  if (chunk_rows >= 1 && chunk_rows < inputs[0].shape()[0]) {
    return RunSplit(inputs, chunk_rows, outputs);
  }
  BRIGADE_ASSIGN_OR_RETURN(ExecutionPlan * plan, PlanFor(inputs));
  BRIGADE_RETURN_IF_ERROR(RunPlan(*plan, inputs, outputs));
  last_run_flops_ = plan->total_flops;
  last_chunk_rows_ = chunk_rows;
  return absl::OkStatus();
}

}  // namespace brigade::engine::onnx
