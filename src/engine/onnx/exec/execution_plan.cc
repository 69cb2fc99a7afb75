#include "engine/onnx/exec/execution_plan.h"

#include <chrono>
#include <cstring>

#include "core/status_macros.h"
#include "core/strings.h"

namespace brigade::engine::onnx {

absl::Status ExecutionPlan::Run(std::span<const Tensor> inputs, std::byte* arena,
                                dnnl::stream& stream, int threads, std::vector<Tensor>* outputs,
                                std::vector<int64_t>* step_ns) {
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
  run_inputs_.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) run_inputs_[i] = inputs[i].data();
  run_outputs_.resize(outputs->size());
  for (size_t j = 0; j < outputs->size(); ++j) run_outputs_[j] = (*outputs)[j].mutable_data();
  return Execute(run_inputs_, run_outputs_, arena, stream, threads, step_ns,
                 /*copy_same_as=*/false);
}

absl::Status ExecutionPlan::RunOnBuffers(std::span<const std::byte* const> inputs,
                                         std::span<std::byte* const> outputs, std::byte* arena,
                                         dnnl::stream& stream, int threads) {
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
