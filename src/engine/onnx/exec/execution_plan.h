#ifndef BRIGADE_ENGINE_ONNX_EXEC_EXECUTION_PLAN_H_
#define BRIGADE_ENGINE_ONNX_EXEC_EXECUTION_PLAN_H_

// ExecutionPlan: one input-shape signature of a model, fully prepared — kernels (with their
// oneDNN primitives), the buffer of every value (a slot: an arena offset, a graph input, a graph
// output tensor, or a constant), and the arena size from the static memory plan.
//
// Run() allocates the output tensors (they leave with the caller) and nothing else: every
// intermediate lives at its planned offset in the caller's arena, and the per-step pointer
// arrays are reused. RunOnBuffers() allocates nothing at all: a subgraph's plan (an If branch,
// a Loop body run once per iteration) reads and writes buffers its node planned. Values computed at
// plan time (shape subgraphs, folded results) are owned by the plan and never recomputed.
//
// Data-dependent shapes: a step whose output shape only its run decides (NonMaxSuppression;
// KernelDef::dynamic_output) ends the plan. Its output gets a buffer of the most bytes it may
// write, and the graph's remaining nodes are planned as a continuation once a run has reported
// the actual shape — one continuation per shape seen (at most kMaxContinuations, the oldest
// dropped), reading the values it needs from this plan's buffers and using an arena of its own.
// A plan without such a step is unchanged: Run() never looks at continuations.
//
// Thread safety: a plan belongs to one instance; Run() is not reentrant (it reuses pointer
// arrays).

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/tensor.h"
#include "engine/onnx/kernels/kernel.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace brigade::engine::onnx {

class ExecutionPlan {
 public:
  struct Slot {
    enum class Kind { kArena, kInput, kOutput, kConstant };
    Kind kind = Kind::kArena;
    size_t index = 0;  // arena offset, graph input index or graph output index
    const std::byte* constant = nullptr;
  };

  struct Step {
    std::unique_ptr<OpKernel> kernel;
    std::vector<int> inputs;   // slot ids, -1 when absent
    std::vector<int> outputs;  // slot ids, -1 when absent
    int scratch = -1;          // arena slot of the kernel's scratch
    std::string name;          // node name (for errors and profiles)
    std::string op_type;
    int64_t flops = 0;  // see flops.h
    // Reused by Run().
    std::vector<const std::byte*> input_ptrs;
    std::vector<std::byte*> output_ptrs;
  };

  // How graph output j is produced: written by a step into its own tensor, shared with an
  // earlier output naming the same value, or copied from a slot at the end of the run.
  struct OutputBinding {
    enum class Kind { kWritten, kSameAs, kCopy };
    Kind kind = Kind::kWritten;
    int source = -1;  // output index (kSameAs) or slot id (kCopy)
  };

  std::vector<Slot> slots;
  std::vector<Step> steps;
  std::vector<OutputBinding> output_bindings;
  std::vector<DataType> output_types;
  std::vector<Shape> output_shapes;
  size_t arena_bytes = 0;
  // Sum of the steps' flops.
  int64_t total_flops = 0;
  // Tensors the plan owns: plan-time results and copies of shape-deciding inputs.
  std::vector<std::unique_ptr<Tensor>> owned;

  // Continuations kept per plan (see the file comment).
  static constexpr size_t kMaxContinuations = 64;
  // Set when the plan ends at a step with a data-dependent output shape: that step's index and
  // the most elements it may write to its output.
  int dynamic_step = -1;
  int64_t dynamic_capacity = 0;
  // Slots whose buffers the continuation reads, in the order of its inputs after the graph's.
  std::vector<int> carried_slots;
  // Largest arena a continuation may need (the session's limit); more fails the run with
  // RESOURCE_EXHAUSTED.
  size_t max_continuation_arena_bytes = size_t{8} << 30;
  // Plans the rest of the graph for the dynamic output's actual shape.
  std::function<absl::StatusOr<std::unique_ptr<ExecutionPlan>>(const Shape&, dnnl::stream&)>
      plan_continuation;

  // Runs the plan. `inputs` match the signature it was built for; `arena` holds at least
  // arena_bytes. Errors name the failing node. When `step_ns` is given, each step's wall time
  // is added to (*step_ns)[step] (resized to the step count) — for profiles, not the hot path.
  absl::Status Run(std::span<const Tensor> inputs, std::byte* arena, dnnl::stream& stream,
                   int threads, std::vector<Tensor>* outputs,
                   std::vector<int64_t>* step_ns = nullptr);

  // Runs the plan on caller-owned buffers: `inputs` per graph input (as planned), `outputs` per
  // graph output, each of output_types/output_shapes (distinct buffers, none inside the arena
  // region the plan uses). Errors name the failing node.
  absl::Status RunOnBuffers(std::span<const std::byte* const> inputs,
                            std::span<std::byte* const> outputs, std::byte* arena,
                            dnnl::stream& stream, int threads);

  // Continuations planned so far (for tests).
  size_t continuation_count() const { return continuations_.size(); }

 private:
  // Run() on input pointers (a continuation's inputs are the graph's and the carried buffers).
  absl::Status RunOnPointers(std::span<const std::byte* const> inputs, std::byte* arena,
                             dnnl::stream& stream, int threads, std::vector<Tensor>* outputs,
                             std::vector<int64_t>* step_ns);
  // A plan with a dynamic step: runs up to it, then the continuation for the shape it reported.
  absl::Status RunDynamic(std::span<const std::byte* const> inputs, std::byte* arena,
                          dnnl::stream& stream, int threads, std::vector<Tensor>* outputs,
                          std::vector<int64_t>* step_ns);
  // The common part; `copy_same_as` copies outputs bound kSameAs (Run shares their tensor).
  absl::Status Execute(std::span<const std::byte* const> inputs,
                       std::span<std::byte* const> outputs, std::byte* arena, dnnl::stream& stream,
                       int threads, std::vector<int64_t>* step_ns, bool copy_same_as);

  std::vector<std::byte*> slot_ptrs_;
  std::vector<const std::byte*> run_inputs_;  // reused by Run
  std::vector<std::byte*> run_outputs_;       // reused by Run
  std::vector<size_t> output_bytes_;          // per output, computed on the first run
  Shape dynamic_shape_;                       // what the dynamic step reported
  std::map<Shape, std::unique_ptr<ExecutionPlan>> continuations_;
  std::vector<Shape> continuation_order_;       // oldest first
  Tensor continuation_arena_;                   // shared by the continuations
  std::vector<const std::byte*> carried_ptrs_;  // reused by RunDynamic
};

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_EXEC_EXECUTION_PLAN_H_
