#ifndef BRIGADE_ENGINE_ONNX_EXEC_PLANNER_H_
#define BRIGADE_ENGINE_ONNX_EXEC_PLANNER_H_

// BuildPlan: turns a CompiledModel plus one set of concrete inputs into an ExecutionPlan.
//
// Walking the nodes in order, the planner
//   1. propagates types, shapes and layouts by creating each node's kernel (the kernel factory
//      validates and states its outputs);
//   2. evaluates at plan time every node whose inputs are all known — constants, Shape of any
//      value, and whatever is computed from those — so shape subgraphs cost nothing per run;
//   3. keeps oneDNN blocked layouts between ops that accept them and inserts a reorder to the
//      plain layout where a blocked value meets an op (or a graph output) that needs it, once per
//      value;
//   4. lets view ops (Reshape, Squeeze...) share their input's buffer;
//   5. records each buffer's lifetime and assigns arena offsets with PlanMemory().
// Only the inputs' shapes matter, except for the model's shape inputs (see CompiledModel), whose
// contents are baked into the plan.
//
// Subgraphs (If branches, Loop and Scan bodies) are planned by their node's kernel factory with
// PlanSubgraph: a plan of their own, whose arena the kernel takes as scratch of the enclosing
// plan, so that it is sized and placed at plan time like any other buffer.
//
// Thread safety: BuildPlan reads the CompiledModel (thread-safe) and uses `stream` for plan-time
// evaluation; call it from the thread that owns the stream.
// Errors: INVALID_ARGUMENT / UNIMPLEMENTED naming the node, op and reason.

#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "core/tensor.h"
#include "engine/onnx/exec/compiled_model.h"
#include "engine/onnx/exec/execution_plan.h"

namespace brigade::engine::onnx {

absl::StatusOr<std::unique_ptr<ExecutionPlan>> BuildPlan(const CompiledModel& model,
                                                         std::span<const Tensor> inputs,
                                                         int threads, dnnl::stream& stream);

// Plans one run on `inputs` (packing the weights it reads, in their layouts for these shapes)
// and frees each fp32 constant as soon as every node reading it has packed it
// (CompiledModel::ReleaseIfPacked). For loading: call it once, before any session of `model`
// plans (it changes the model's graph). The plan is dropped; later plans rebuild a released
// source from its packed copy when they need it in another layout.
absl::Status PlanAndReleaseSources(CompiledModel& model, std::span<const Tensor> inputs);

// The shape of every graph value (indexed by ValueId; nullopt where none was computed) for
// `inputs`, found by walking the planner without building primitives (kernels' shape_only mode);
// shape subgraphs are still evaluated. For static shape inference.
absl::StatusOr<std::vector<std::optional<Shape>>> PropagateShapes(const CompiledModel& model,
                                                                  std::span<const Tensor> inputs);

// A subgraph's plan for one set of input descriptions.
struct SubgraphPlan {
  // No steps in shape-only mode; owns the plan-time values `outputs` may point into.
  std::unique_ptr<ExecutionPlan> plan;
  // Each graph output's type and shape, with its contents when known at plan time.
  std::vector<ValueInfo> outputs;
};

// Plans `graph`, a subgraph of the node `ctx` describes, for inputs described by `inputs` (the
// subgraph's input order: formal inputs, then captured ones); an input with contents is planned
// as known, and those contents must outlive the plan. Uses ctx's engine, packed weights, threads
// and shape_only mode. Errors name the subgraph's failing node, or an input that contradicts the
// type or shape the subgraph declares (INVALID_ARGUMENT).
absl::StatusOr<SubgraphPlan> PlanSubgraph(const Graph& graph, std::span<const ValueInfo> inputs,
                                          const KernelContext& ctx);

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_EXEC_PLANNER_H_
