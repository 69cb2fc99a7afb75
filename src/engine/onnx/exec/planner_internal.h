#ifndef BRIGADE_ENGINE_ONNX_EXEC_PLANNER_INTERNAL_H_
#define BRIGADE_ENGINE_ONNX_EXEC_PLANNER_INTERNAL_H_

// Planner: the walk over a graph's nodes behind planner.h's functions, in three files, one
// concept each: planner.cc (the walk, the graph's inputs and outputs, slots, buffers and the
// arena), planner_node.cc (one node: its inputs, its kernel, plan-time evaluation, its step) and
// planner_continuation.cc (stopping after a dynamic step and resuming from there). Internal to
// those files: everything else includes planner.h.
//
// Thread safety: a Planner is used by one thread for one Build(); it reads the graph and the
// kernel registry (both thread-safe to read) and evaluates on the stream it borrows.
// Ownership: the target, the input descriptions and the stream are borrowed for the planner's
// life; the plan Build() returns owns its kernels and the plan-time values it made, and a
// continuation owns the PlannerState it resumes from.
// Failure: Build() returns INVALID_ARGUMENT / UNIMPLEMENTED naming the node, op and reason
// (planner.h), INTERNAL where a kernel factory breaks its contract.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/shape.h"
#include "core/tensor.h"
#include "engine/onnx/exec/compiled_model.h"
#include "engine/onnx/exec/execution_plan.h"
#include "engine/onnx/exec/memory_planner.h"
#include "engine/onnx/ir/graph.h"
#include "engine/onnx/kernels/kernel.h"
#include "engine/onnx/kernels/registry.h"

namespace brigade::engine::onnx::planner_internal {

// What the planner tracks per value (graph values first, then internal reorder results).
struct PlanValue {
  ValueInfo info;
  bool known = false;    // info.constant holds the contents
  bool defined = false;  // some step or input provides it
  int slot = -1;
  int buffer = -1;      // arena buffer, for lifetimes
  int plain_copy = -1;  // index of the plain-layout copy of a blocked value
  std::string name;
};

// What a planner plans: a model's main graph or a subgraph, with what its kernels share.
struct PlanTarget {
  const Graph& graph;
  const std::vector<int>& use_counts;  // CountUses(graph)
  const dnnl::engine& engine;
  PackedWeights& weights;
  // The model's; a subgraph's kernels use their enclosing node's.
  ComputePrecision precision = ComputePrecision::kFp32;
  // Main graph: known inputs are request tensors, copied into the plan. Subgraph: they point
  // into the enclosing plan (which outlives this one), and the inputs are checked against the
  // subgraph's declared types and shapes, which its passes relied on.
  bool subgraph = false;
  // Main graph: CompiledModel::released_keys(), per value (empty: holds its data).
  const std::vector<std::string>* released_keys = nullptr;
  // Only inside PlanAndReleaseSources: told of each constant once its last reader is built.
  CompiledModel* releaser = nullptr;
};

// Where a plan that ended at a dynamic step (KernelDef::dynamic_output) stopped: what its
// continuation needs to plan the remaining nodes. Owned by that plan's plan_continuation;
// defined in planner_continuation.cc, the only file that reads it.
struct PlannerState;

class Planner {
 public:
  // `inputs` describe the graph's inputs; those with contents are known at plan time. With
  // `resume`, plans the nodes after the dynamic step `resume` describes, whose output has
  // `dynamic_shape` (`inputs` is then unused).
  Planner(const PlanTarget& target, std::span<const ValueInfo> inputs, int threads,
          dnnl::stream& stream, bool shape_only, const PlannerState* resume = nullptr,
          const Shape* dynamic_shape = nullptr)
      : target_(target),
        graph_(target.graph),
        inputs_(inputs),
        threads_(threads),
        stream_(stream),
        shape_only_(shape_only),
        resume_(resume),
        dynamic_shape_(dynamic_shape),
        plan_(std::make_unique<ExecutionPlan>()) {}

  absl::StatusOr<std::unique_ptr<ExecutionPlan>> Build();

  // After Build() in shape_only mode: each graph value's shape, when computed.
  std::vector<std::optional<Shape>> Shapes() const;

  // After Build(): each graph output's description, with its contents when known at plan time
  // (owned by the plan Build() returned, or by the graph).
  std::vector<ValueInfo> OutputInfos() const;

 private:
  using Slot = ExecutionPlan::Slot;

  // A node's inputs as its kernel reads them.
  struct NodeInputs {
    // Per node input: the value read, which is the plain copy of a blocked input the op cannot
    // take (meaningful where `present`).
    std::vector<size_t> index;
    std::vector<bool> present;
    // Every input whose data the op reads is known at plan time.
    bool all_known = true;
  };

  // planner.cc: the walk, slots and buffers, the graph's inputs and outputs.

  // A main graph's (or subgraph's) start: its values, inputs and constants.
  absl::Status Start();
  // Whether a node from `first` on has a dynamic output (see dynamic_ahead_).
  bool DynamicNodeAhead(size_t first) const;
  int AddSlot(Slot slot);
  // A new arena buffer first written by the step about to be appended.
  int AddBuffer(size_t bytes);
  // Marks the slot as read by the step about to be appended.
  void Use(int slot);
  Tensor* Own(Tensor tensor);
  absl::Status BindInputs();
  void BindConstants();
  // True when `id`'s source was released and this plan has not rebuilt it.
  bool Released(ValueId id) const;
  // A subgraph input must have the type and shape its graph declares: the subgraph's passes
  // (shape folding, fusions) relied on them, as the main graph's rely on the session's checks.
  absl::Status CheckDeclared(ValueId id, const ValueInfo& given) const;
  // The plain-layout version of value `index`, adding a reorder step the first time.
  absl::StatusOr<size_t> Plain(size_t index);
  void AppendStep(std::unique_ptr<OpKernel> kernel, std::vector<int> inputs,
                  std::vector<int> outputs, int scratch, std::string name, std::string op);
  int FirstOutputIndex(ValueId id) const;
  absl::Status BindOutputs();
  // A step that reorders blocked value `index` straight into graph output `j`.
  absl::Status ReorderIntoOutput(size_t index, size_t j);
  void AssignArena();

  // planner_node.cc: one node.

  absl::Status PlanNode(const Node& node);
  // Resolves the node's inputs, reordering blocked ones the op cannot read.
  absl::StatusOr<NodeInputs> ResolveInputs(const Node& node, const KernelDef& def);
  // The context the node's kernel factory is given. Reads the remaining uses, so it comes
  // before CountOffUses.
  KernelContext NodeContext(const Node& node, const NodeInputs& in) const;
  // The in-place offer for `node` (KernelContext::reusable_inputs): inputs read for the last
  // time here, once, from an arena buffer no other value shares, when output 0 is an
  // intermediate. Called before the node's uses are counted off.
  uint32_t ReusableInputs(const Node& node, const NodeInputs& in) const;
  void CountOffUses(const Node& node);
  absl::Status CheckDynamicOutput(const Node& node, const KernelDef& def) const;
  // The node's kernel, built again on rebuilt sources where it did not pack a released one;
  // then, for PlanAndReleaseSources, releases the constants this node was the last to read.
  absl::StatusOr<std::unique_ptr<OpKernel>> CreateKernel(const Node& node, const KernelDef& def,
                                                         KernelContext& ctx);
  // The node's released inputs, when its kernel did not pack each of them (a layout or shape
  // this plan reads unpacked): their sources rebuilt into the plan, so the kernel is built again.
  absl::StatusOr<bool> RebuildUnpackedSources(const Node& node, const KernelContext& ctx);
  void ReleaseReadSources(const Node& node);
  absl::Status CheckOutputsDescribed(const Node& node, const KernelContext& ctx) const;
  // Whether the node may run now, at plan time, once its kernel exists and its inputs are known:
  // its op folds, its outputs are plain and they fit what is left of the plan-time budget.
  bool FoldsNow(const KernelDef& def, const KernelContext& ctx) const;
  absl::Status EvaluateNow(const Node& node, const KernelContext& ctx, OpKernel& kernel,
                           const NodeInputs& in);
  // Plan-time tensors for the node's outputs, owned by the plan (null for absent ones), and the
  // pointers the kernel writes them through.
  absl::Status AllocateResults(const Node& node, const KernelContext& ctx,
                               std::vector<const Tensor*>* results,
                               std::vector<std::byte*>* out_ptrs);
  // Shape-only mode: the node's outputs described, no step; a dynamic step stops the walk.
  void DescribeOutputs(const Node& node, const KernelDef& def, const KernelContext& ctx);
  absl::Status CheckInPlace(const Node& node, const KernelContext& ctx) const;
  // The node's step: its input and output slots, its scratch, and the dynamic step's record.
  void AppendNodeStep(const Node& node, const KernelDef& def, std::unique_ptr<OpKernel> kernel,
                      const KernelContext& ctx, const NodeInputs& in);
  std::vector<int> InputSlots(const Node& node, const NodeInputs& in);
  std::vector<int> OutputSlots(const Node& node, const KernelDef& def, const KernelContext& ctx,
                               const NodeInputs& in, const std::vector<int>& in_slots);
  // Where output `k` lives (see OutputSlots).
  int OutputSlot(const Node& node, size_t k, const KernelDef& def, const KernelContext& ctx,
                 const NodeInputs& in, const std::vector<int>& in_slots);

  // planner_continuation.cc: a dynamic step's stop and its continuation's start.

  // After the dynamic step: keeps what later nodes read alive and sets plan_continuation.
  void StopAfter(size_t next_node);
  // Per value: whether a later node or a graph output reads it.
  std::vector<bool> NeededLater() const;
  // Per value: the continuation input it arrives as, or -1; adds the carried arena slots to
  // the plan.
  std::vector<int> CarryNeededValues();
  // Seeds the values from resume_ (a continuation's start); returns the first node to plan.
  size_t Resume();

  const PlanTarget& target_;
  const Graph& graph_;
  const std::span<const ValueInfo> inputs_;
  const int threads_;
  dnnl::stream& stream_;
  const bool shape_only_;
  const PlannerState* const resume_;
  const Shape* const dynamic_shape_;
  // A node with a dynamic output is yet to be planned: graph outputs get arena buffers, as the
  // last continuation binds them.
  bool dynamic_ahead_ = false;
  // The dynamic step's output value once planned (planning stops there), else -1.
  int stopped_ = -1;
  size_t plan_time_bytes_ = 0;  // results and scratch of the nodes evaluated so far
  std::unique_ptr<ExecutionPlan> plan_;
  std::deque<PlanValue> values_;  // stable addresses: kernels' contexts point into it
  std::vector<BufferLifetime> buffers_;
  std::vector<std::vector<int>> buffer_slots_;
  std::map<int, int> slot_buffer_;
  std::map<ValueId, bool> written_outputs_;
  // Per graph value: readers (node inputs, graph outputs) not yet planned.
  std::vector<int> remaining_uses_;
  // Arena slots that more than one value lives in (view ops' outputs share their input's).
  std::set<int> shared_slots_;
};

}  // namespace brigade::engine::onnx::planner_internal

#endif  // BRIGADE_ENGINE_ONNX_EXEC_PLANNER_INTERNAL_H_
