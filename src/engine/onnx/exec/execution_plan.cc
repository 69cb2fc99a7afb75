#include "engine/onnx/exec/execution_plan.h"

#include <chrono>
#include <cstring>

#include "core/check.h"
#include "core/status_macros.h"
#include "core/strings.h"

namespace brigade::engine::onnx {

absl::Status ExecutionPlan::Run(std::span<const Tensor> inputs, std::byte* arena,
                                dnnl::stream& stream, int threads, std::vector<Tensor>* outputs,
                                std::vector<int64_t>* step_ns) {
  run_inputs_.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) run_inputs_[i] = inputs[i].data();
  return RunOnPointers(run_inputs_, arena, stream, threads, outputs, step_ns);
}

absl::Status ExecutionPlan::RunOnPointers(std::span<const std::byte* const> inputs,
                                          std::byte* arena, dnnl::stream& stream, int threads,
                                          std::vector<Tensor>* outputs,
                                          std::vector<int64_t>* step_ns) {
  if (dynamic_step >= 0) return RunDynamic(inputs, arena, stream, threads, outputs, step_ns);
  if (step_ns != nullptr) step_ns->resize(steps.size(), 0);
  outputs->clear();
  outputs->reserve(output_types.size());
  for (size_t j = 0; j < output_types.size(); ++j) {
    if (output_bindings[j].kind == OutputBinding::Kind::kSameAs) {
      outputs->push_back((*outputs)[static_cast<size_t>(output_bindings[j].source)]);
      continue;
    }
    BRIGADE_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Allocate(output_types[j], output_shapes[j]));
    outputs->push_back(std::move(tensor));
  }
  run_outputs_.resize(outputs->size());
  for (size_t j = 0; j < outputs->size(); ++j) run_outputs_[j] = (*outputs)[j].mutable_data();
  return Execute(inputs, run_outputs_, arena, stream, threads, step_ns, /*copy_same_as=*/false);
}

absl::Status ExecutionPlan::RunDynamic(std::span<const std::byte* const> inputs, std::byte* arena,
                                       dnnl::stream& stream, int threads,
                                       std::vector<Tensor>* outputs,
                                       std::vector<int64_t>* step_ns) {
  // The steps up to the dynamic one; the graph outputs are all bound by the last continuation.
  BRIGADE_CHECK(output_types.empty(), "a plan ending at a dynamic step binds no outputs");
  if (step_ns != nullptr) step_ns->resize(steps.size(), 0);
  dynamic_shape_.clear();
  BRIGADE_RETURN_IF_ERROR(Execute(inputs, {}, arena, stream, threads, step_ns,
                                  /*copy_same_as=*/false));
  const Step& dynamic = steps[static_cast<size_t>(dynamic_step)];
  int64_t elements = 1;
  for (int64_t d : dynamic_shape_) elements = d < 0 ? -1 : elements * d;
  if (dynamic_shape_.empty() || elements < 0 || elements > dynamic_capacity) {
    return absl::InternalError(StrCat("node '", dynamic.name, "' (", dynamic.op_type,
                                      "): reported output shape ", ShapeToString(dynamic_shape_),
                                      " beyond its ", dynamic_capacity, " elements"));
  }
  auto it = continuations_.find(dynamic_shape_);
  if (it == continuations_.end()) {
    absl::StatusOr<std::unique_ptr<ExecutionPlan>> next = plan_continuation(dynamic_shape_, stream);
    if (!next.ok()) {
      return absl::Status(
          next.status().code(),
          StrCat("after node '", dynamic.name, "' (", dynamic.op_type, ") gave shape ",
                 ShapeToString(dynamic_shape_), ": ", next.status().message()));
    }
    // Grow the shared arena before keeping the plan, so a kept plan always fits it.
    const size_t need = (*next)->arena_bytes;
    if (need > max_continuation_arena_bytes) {
      return absl::ResourceExhaustedError(StrCat(
          "after node '", dynamic.name, "' (", dynamic.op_type, ") gave shape ",
          ShapeToString(dynamic_shape_), ", the rest of the graph needs ", need >> 20,
          " MiB of intermediates, over the ", max_continuation_arena_bytes >> 20, " MiB limit"));
    }
    if (need > continuation_arena_.byte_size()) {
      BRIGADE_ASSIGN_OR_RETURN(
          continuation_arena_,
          Tensor::Allocate(DataType::kUint8, Shape{static_cast<int64_t>(need)}));
    }
    if (continuations_.size() >= kMaxContinuations) {
      continuations_.erase(continuation_order_.front());
      continuation_order_.erase(continuation_order_.begin());
    }
    continuation_order_.push_back(dynamic_shape_);
    it = continuations_.emplace(dynamic_shape_, *std::move(next)).first;
  }
  carried_ptrs_.assign(inputs.begin(), inputs.end());
  for (int slot : carried_slots) carried_ptrs_.push_back(slot_ptrs_[static_cast<size_t>(slot)]);
  // The continuation's own steps are not part of this plan's profile.
  return it->second->RunOnPointers(carried_ptrs_, continuation_arena_.mutable_data(), stream,
                                   threads, outputs, /*step_ns=*/nullptr);
}

absl::Status ExecutionPlan::RunOnBuffers(std::span<const std::byte* const> inputs,
                                         std::span<std::byte* const> outputs, std::byte* arena,
                                         dnnl::stream& stream, int threads) {
  // Subgraph plans never end at a dynamic step (the planner refuses one there).
  BRIGADE_CHECK(dynamic_step < 0, "subgraph plans have no dynamic step");
  return Execute(inputs, outputs, arena, stream, threads, nullptr, /*copy_same_as=*/true);
}

absl::Status ExecutionPlan::Execute(std::span<const std::byte* const> inputs,
                                    std::span<std::byte* const> outputs, std::byte* arena,
                                    dnnl::stream& stream, int threads,
                                    std::vector<int64_t>* step_ns, bool copy_same_as) {
  if (output_bytes_.size() != output_types.size()) {
    output_bytes_.clear();
    for (size_t j = 0; j < output_types.size(); ++j) {
      int64_t count = 1;
      for (int64_t d : output_shapes[j]) count *= d;
      output_bytes_.push_back(static_cast<size_t>(count) * DataTypeSize(output_types[j]));
    }
  }
  slot_ptrs_.resize(slots.size());
  for (size_t i = 0; i < slots.size(); ++i) {
    const Slot& slot = slots[i];
    switch (slot.kind) {
      case Slot::Kind::kArena:
        slot_ptrs_[i] = arena + slot.index;
        break;
      case Slot::Kind::kInput:
        // Kernels never write to their inputs; the cast only fits the common pointer table.
        slot_ptrs_[i] = const_cast<std::byte*>(inputs[slot.index]);
        break;
      case Slot::Kind::kOutput:
        slot_ptrs_[i] = outputs[slot.index];
        break;
      case Slot::Kind::kConstant:
        slot_ptrs_[i] = const_cast<std::byte*>(slot.constant);
        break;
    }
  }
  for (size_t s = 0; s < steps.size(); ++s) {
    Step& step = steps[s];
    const auto start = step_ns != nullptr ? std::chrono::steady_clock::now()
                                          : std::chrono::steady_clock::time_point();
    for (size_t k = 0; k < step.inputs.size(); ++k) {
      step.input_ptrs[k] = step.inputs[k] < 0 ? nullptr : slot_ptrs_[step.inputs[k]];
    }
    for (size_t k = 0; k < step.outputs.size(); ++k) {
      step.output_ptrs[k] = step.outputs[k] < 0 ? nullptr : slot_ptrs_[step.outputs[k]];
    }
    RunContext ctx;
    ctx.inputs = step.input_ptrs;
    ctx.outputs = step.output_ptrs;
    ctx.scratch = step.scratch < 0 ? nullptr : slot_ptrs_[step.scratch];
    ctx.stream = &stream;
    ctx.threads = threads;
    if (static_cast<int>(s) == dynamic_step) ctx.dynamic_shape = &dynamic_shape_;
    absl::Status status = step.kernel->Run(ctx);
    if (!status.ok()) {
      return absl::Status(
          status.code(), StrCat("node '", step.name, "' (", step.op_type, "): ", status.message()));
    }
    if (step_ns != nullptr) {
      (*step_ns)[s] += std::chrono::duration_cast<std::chrono::nanoseconds>(
                           std::chrono::steady_clock::now() - start)
                           .count();
    }
  }
  for (size_t j = 0; j < output_bindings.size(); ++j) {
    if (output_bindings[j].kind != OutputBinding::Kind::kCopy) continue;
    const std::byte* source = slot_ptrs_[static_cast<size_t>(output_bindings[j].source)];
    if (output_bytes_[j] > 0 && source != outputs[j]) {
      std::memcpy(outputs[j], source, output_bytes_[j]);
    }
  }
  if (copy_same_as) {
    for (size_t j = 0; j < output_bindings.size(); ++j) {
      if (output_bindings[j].kind != OutputBinding::Kind::kSameAs || output_bytes_[j] == 0) {
        continue;
      }
      std::memcpy(outputs[j], outputs[static_cast<size_t>(output_bindings[j].source)],
                  output_bytes_[j]);
    }
  }
  return absl::OkStatus();
}

}  // namespace brigade::engine::onnx
