#include "engine/onnx/exec/planner.h"

#include <algorithm>
#include <deque>
#include <map>
#include <set>

#include "core/check.h"
#include "core/status_macros.h"
#include "core/strings.h"
#include "engine/onnx/exec/flops.h"
#include "engine/onnx/exec/memory_planner.h"
#include "engine/onnx/kernels/dnnl_util.h"
#include "engine/onnx/kernels/kernel_util.h"
#include "engine/onnx/kernels/registry.h"
#include "engine/onnx/kernels/reorder.h"

namespace brigade::engine::onnx {
namespace {

using Slot = ExecutionPlan::Slot;

// Most bytes the nodes evaluated at plan time may produce, all together: shape subgraphs take
// bytes, while a hostile model's chain of ConstantOfShape/Expand nodes could otherwise pin one
// such budget per node. What does not fit runs in the arena, whose size the session bounds.
constexpr size_t kMaxPlanTimeBytes = size_t{256} << 20;
// The same in shape-only mode, where only shape subgraphs (a few bytes) need evaluating: a large
// value evaluated there is thrown away, so it only costs load time.
constexpr size_t kMaxShapeOnlyBytes = size_t{4} << 20;

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
// continuation needs to plan the remaining nodes. Owned by that plan's plan_continuation.
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
  std::vector<std::optional<Shape>> Shapes() const {
    std::vector<std::optional<Shape>> shapes(graph_.num_values());
    for (size_t i = 0; i < graph_.num_values(); ++i) {
      if (values_[i].defined && values_[i].info.dtype != DataType::kInvalid) {
        shapes[i] = values_[i].info.shape;
      }
    }
    return shapes;
  }

  // After Build(): each graph output's description, with its contents when known at plan time
  // (owned by the plan Build() returned, or by the graph).
  std::vector<ValueInfo> OutputInfos() const {
    std::vector<ValueInfo> infos;
    for (ValueId id : graph_.outputs()) {
      const PlanValue& v = values_[static_cast<size_t>(id)];
      infos.push_back(v.info);
      if (!v.known) infos.back().constant = nullptr;
    }
    return infos;
  }

 private:
  int AddSlot(Slot slot) {
    plan_->slots.push_back(slot);
    return static_cast<int>(plan_->slots.size() - 1);
  }

  // A new arena buffer first written by the step about to be appended.
  int AddBuffer(size_t bytes) {
    const int step = static_cast<int>(plan_->steps.size());
    buffers_.push_back(BufferLifetime{bytes, step, step});
    buffer_slots_.emplace_back();
    const int slot = AddSlot(Slot{Slot::Kind::kArena, 0, nullptr});
    buffer_slots_.back().push_back(slot);
    slot_buffer_[slot] = static_cast<int>(buffers_.size() - 1);
    return slot;
  }

  // Marks the slot as read by the step about to be appended.
  void Use(int slot) {
    auto it = slot_buffer_.find(slot);
    if (it == slot_buffer_.end()) return;
    BufferLifetime& b = buffers_[static_cast<size_t>(it->second)];
    b.last_step = std::max(b.last_step, static_cast<int>(plan_->steps.size()));
  }

  Tensor* Own(Tensor tensor) {
    plan_->owned.push_back(std::make_unique<Tensor>(std::move(tensor)));
    return plan_->owned.back().get();
  }

  absl::Status BindInputsAndConstants() {
    const auto& graph_inputs = graph_.inputs();
    if (inputs_.size() != graph_inputs.size()) {
      return absl::InvalidArgumentError(
          StrCat("expected ", graph_inputs.size(), " inputs, got ", inputs_.size()));
    }
    for (size_t i = 0; i < graph_inputs.size(); ++i) {
      PlanValue& v = values_[static_cast<size_t>(graph_inputs[i])];
      if (target_.subgraph) BRIGADE_RETURN_IF_ERROR(CheckDeclared(graph_inputs[i], inputs_[i]));
      v.info.dtype = inputs_[i].dtype;
      v.info.shape = inputs_[i].shape;
      v.defined = true;
      if (inputs_[i].constant != nullptr) {
        if (target_.subgraph) {
          v.info.constant = inputs_[i].constant;
        } else {
          BRIGADE_ASSIGN_OR_RETURN(Tensor copy, inputs_[i].constant->Clone());
          v.info.constant = Own(std::move(copy));
        }
        v.known = true;
        v.slot = AddSlot(Slot{Slot::Kind::kConstant, 0, v.info.constant->data()});
      } else {
        v.slot = AddSlot(Slot{Slot::Kind::kInput, i, nullptr});
      }
    }
    for (size_t id = 0; id < graph_.num_values(); ++id) {
      const Value& value = graph_.value(static_cast<ValueId>(id));
      if (!value.constant.has_value()) continue;
      PlanValue& v = values_[id];
      v.info.dtype = value.constant->dtype();
      v.info.shape = value.constant->shape();
      v.info.constant = &*value.constant;
      // A released source has no data: not evaluable at plan time, rebuilt when read unpacked.
      v.known = !Released(static_cast<ValueId>(id));
      v.defined = true;
      v.slot = AddSlot(Slot{Slot::Kind::kConstant, 0, value.constant->data()});
    }
    return absl::OkStatus();
  }

  // True when `id`'s source was released and this plan has not rebuilt it.
  bool Released(ValueId id) const {
    const auto index = static_cast<size_t>(id);
    return target_.released_keys != nullptr && index < target_.released_keys->size() &&
           !(*target_.released_keys)[index].empty() && !values_[index].known;
  }

  // The node's released inputs, when its kernel did not pack each of them (a layout or shape
  // this plan reads unpacked): their sources rebuilt into the plan, so the kernel is built again.
  absl::StatusOr<bool> RebuildUnpackedSources(const Node& node, const KernelContext& ctx) {
    std::vector<ValueId> released;
    for (ValueId id : node.inputs) {
      if (id != kNoValue && Released(id) &&
          std::find(released.begin(), released.end(), id) == released.end()) {
        released.push_back(id);
      }
    }
    if (static_cast<size_t>(ctx.released_sources_packed) >= released.size()) return false;
    for (ValueId id : released) {
      PlanValue& v = values_[static_cast<size_t>(id)];
      BRIGADE_ASSIGN_OR_RETURN(Tensor bytes,
                               RebuildSource(target_.engine, target_.weights,
                                             (*target_.released_keys)[static_cast<size_t>(id)]));
      // Tensor::Copy checks that the rebuilt bytes fill the value's shape.
      BRIGADE_ASSIGN_OR_RETURN(Tensor source,
                               Tensor::Copy(v.info.dtype, v.info.shape, bytes.bytes()));
      v.info.constant = Own(std::move(source));
      v.known = true;
      v.slot = AddSlot(Slot{Slot::Kind::kConstant, 0, v.info.constant->data()});
    }
    return true;
  }

  // A subgraph input must have the type and shape its graph declares: the subgraph's passes
  // (shape folding, fusions) relied on them, as the main graph's rely on the session's checks.
  absl::Status CheckDeclared(ValueId id, const ValueInfo& given) const {
    const Value& spec = graph_.value(id);
    bool ok = spec.dtype == DataType::kInvalid || spec.dtype == given.dtype;
    if (ok && spec.shape.has_value()) {
      ok = spec.shape->size() == given.shape.size();
      for (size_t d = 0; ok && d < given.shape.size(); ++d) {
        ok = (*spec.shape)[d] < 0 || (*spec.shape)[d] == given.shape[d];
      }
    }
    if (ok) return absl::OkStatus();
    return absl::InvalidArgumentError(
        StrCat("subgraph input '", spec.name, "' is declared ", DataTypeName(spec.dtype), " ",
               spec.shape.has_value() ? ShapeToString(*spec.shape) : "[?]", " but receives ",
               DataTypeName(given.dtype), " ", ShapeToString(given.shape)));
  }

  // The plain-layout version of value `index`, adding a reorder step the first time.
  absl::StatusOr<size_t> Plain(size_t index) {
    PlanValue& v = values_[index];
    if (!v.info.layout.blocked) return index;
    if (v.plain_copy >= 0) return static_cast<size_t>(v.plain_copy);
    const auto type = ToDnnlType(v.info.dtype);
    if (!type.has_value()) return absl::InternalError("blocked value of a non-oneDNN type");
    const dnnl::memory::desc plain = PlainDesc(v.info.shape, *type);
    BRIGADE_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> kernel,
                             MakeReorderKernel(target_.engine, v.info.layout.desc, plain));
    PlanValue copy;
    copy.info.dtype = v.info.dtype;
    copy.info.shape = v.info.shape;
    copy.defined = true;
    copy.name = StrCat(v.name, "/plain");
    Use(v.slot);
    copy.slot = AddBuffer(copy.info.byte_size());
    AppendStep(std::move(kernel), {v.slot}, {copy.slot}, -1, copy.name, "Reorder");
    values_.push_back(std::move(copy));
    values_[index].plain_copy = static_cast<int>(values_.size() - 1);
    return values_.size() - 1;
  }

  void AppendStep(std::unique_ptr<OpKernel> kernel, std::vector<int> inputs,
                  std::vector<int> outputs, int scratch, std::string name, std::string op) {
    ExecutionPlan::Step step;
    step.kernel = std::move(kernel);
    step.input_ptrs.assign(inputs.size(), nullptr);
    step.output_ptrs.assign(outputs.size(), nullptr);
    step.inputs = std::move(inputs);
    step.outputs = std::move(outputs);
    step.scratch = scratch;
    step.name = std::move(name);
    step.op_type = std::move(op);
    plan_->steps.push_back(std::move(step));
  }

  // After the dynamic step: keeps what later nodes read alive and sets plan_continuation.
  void StopAfter(size_t next_node);
  // Seeds the values from resume_ (a continuation's start).
  void Resume();

  absl::Status PlanNode(const Node& node) {
    const KernelDef* def = KernelRegistry::Get().Find(node.domain, node.op_type, node.opset);
    if (def == nullptr) {
      return absl::UnimplementedError(
          StrCat("node '", node.name, "' (", node.op_type, "): no kernel for opset ", node.opset));
    }
    // Resolve inputs (reordering blocked ones the op cannot read).
    std::vector<size_t> input_index(node.inputs.size(), 0);
    std::vector<bool> present(node.inputs.size(), false);
    std::vector<const ValueInfo*> as_read;  // the inputs as they are, before any reorder
    for (ValueId id : node.inputs) {
      const bool defined = id != kNoValue && values_[static_cast<size_t>(id)].defined;
      as_read.push_back(defined ? &values_[static_cast<size_t>(id)].info : nullptr);
    }
    bool all_known = true;
    const std::vector<bool> value_inputs = def->ValueInputs(node);
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      const ValueId id = node.inputs[k];
      if (id == kNoValue) continue;
      size_t index = static_cast<size_t>(id);
      if (!values_[index].defined) {
        return absl::InvalidArgumentError(StrCat("node '", node.name, "' (", node.op_type,
                                                 "): input '", values_[index].name,
                                                 "' is not computed before it"));
      }
      if (values_[index].info.layout.blocked && def->reads_input_data &&
          !def->TakesBlocked(node, k, as_read)) {
        BRIGADE_ASSIGN_OR_RETURN(index, Plain(index));
      }
      input_index[k] = index;
      present[k] = true;
      if (!values_[index].known && def->reads_input_data) all_known = false;
      if (k < value_inputs.size() && value_inputs[k] && !values_[index].known) {
        return absl::InvalidArgumentError(
            StrCat("node '", node.name, "' (", node.op_type, "): input ", k, " ('",
                   values_[index].name, "') decides a shape but is only known at run time"));
      }
    }
    KernelContext ctx;
    ctx.node = &node;
    if (!shape_only_) ctx.reusable_inputs = ReusableInputs(node, input_index, present);
    for (ValueId id : node.inputs) {
      if (id != kNoValue) --remaining_uses_[static_cast<size_t>(id)];
    }
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      ctx.inputs.push_back(present[k] ? &values_[input_index[k]].info : nullptr);
    }
    ctx.outputs.resize(node.outputs.size());
    for (ValueId output : node.outputs) {
      ctx.output_used.push_back(output != kNoValue &&
                                target_.use_counts[static_cast<size_t>(output)] > 0);
    }
    ctx.threads = threads_;
    ctx.precision = target_.precision;
    ctx.engine = &target_.engine;
    ctx.weights = &target_.weights;
    ctx.shape_only = shape_only_;
    if (def->dynamic_output && target_.subgraph) {
      return absl::UnimplementedError(
          StrCat("node '", node.name, "' (", node.op_type,
                 "): an output shape that depends on the data is not supported in a subgraph"));
    }
    if (def->dynamic_output && (node.outputs.size() != 1 || node.outputs[0] == kNoValue)) {
      return absl::InternalError(StrCat("node '", node.name, "' (", node.op_type,
                                        "): a dynamic-output kernel needs exactly one output"));
    }
    BRIGADE_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> kernel, def->create(ctx));
    if (!shape_only_) {
      BRIGADE_ASSIGN_OR_RETURN(const bool rebuilt, RebuildUnpackedSources(node, ctx));
      if (rebuilt) {
        // The inputs now point at the rebuilt sources; describe the outputs afresh.
        ctx.outputs.assign(node.outputs.size(), ValueInfo{});
        ctx.scratch_bytes = 0;
        ctx.output_reuses_input = -1;
        ctx.released_sources_packed = 0;
        BRIGADE_ASSIGN_OR_RETURN(kernel, def->create(ctx));
      }
      if (target_.releaser != nullptr) {
        for (ValueId id : node.inputs) {
          if (id != kNoValue && remaining_uses_[static_cast<size_t>(id)] == 0) {
            target_.releaser->ReleaseIfPacked(id);
          }
        }
      }
    }
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      if (node.outputs[k] != kNoValue && ctx.outputs[k].dtype == DataType::kInvalid &&
          ctx.output_used[k]) {
        return absl::InternalError(StrCat("node '", node.name, "' (", node.op_type,
                                          "): kernel left output ", k, " undescribed"));
      }
    }
    BRIGADE_RETURN_IF_ERROR(CheckOutputSizes(ctx));

    bool outputs_plain = true;
    for (const ValueInfo& out : ctx.outputs) outputs_plain = outputs_plain && !out.layout.blocked;
    size_t result_bytes = ctx.scratch_bytes;
    for (const ValueInfo& out : ctx.outputs) {
      if (out.dtype != DataType::kInvalid) result_bytes += out.byte_size();
    }
    if (kernel != nullptr && all_known && def->foldable && !def->dynamic_output && outputs_plain &&
        result_bytes <= (shape_only_ ? kMaxShapeOnlyBytes : kMaxPlanTimeBytes) - plan_time_bytes_) {
      plan_time_bytes_ += result_bytes;
      return EvaluateNow(node, ctx, *kernel, input_index, present);
    }
    if (shape_only_ && def->dynamic_output) {
      stopped_ = static_cast<int>(node.outputs[0]);
      return absl::OkStatus();
    }
    if (shape_only_) {
      for (size_t k = 0; k < node.outputs.size(); ++k) {
        if (node.outputs[k] == kNoValue) continue;
        PlanValue& v = values_[static_cast<size_t>(node.outputs[k])];
        v.info = ctx.outputs[k];
        v.info.constant = nullptr;
        v.defined = true;
      }
      return absl::OkStatus();
    }
    if (kernel == nullptr) return absl::InternalError("kernel factory returned no kernel");
    const int reused = ctx.output_reuses_input;
    if (reused >= 0) {
      const ValueInfo* in = ctx.inputs[static_cast<size_t>(reused)];
      const ValueInfo& out = ctx.outputs[0];
      if (!ctx.input_reusable(static_cast<size_t>(reused)) || in->dtype != out.dtype ||
          in->shape != out.shape || in->layout.blocked != out.layout.blocked ||
          (in->layout.blocked && in->layout.desc != out.layout.desc)) {
        return absl::InternalError(StrCat("node '", node.name, "' (", node.op_type,
                                          "): output 0 cannot take input ", reused, "'s buffer"));
      }
    }

    std::vector<int> in_slots;
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      if (!present[k]) {
        in_slots.push_back(-1);
        continue;
      }
      const int slot = values_[input_index[k]].slot;
      Use(slot);
      in_slots.push_back(slot);
    }
    std::vector<int> out_slots;
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      const ValueId id = node.outputs[k];
      if (id == kNoValue || ctx.outputs[k].dtype == DataType::kInvalid) {
        out_slots.push_back(-1);
        continue;
      }
      PlanValue& v = values_[static_cast<size_t>(id)];
      v.info = ctx.outputs[k];
      v.info.constant = nullptr;
      v.defined = true;
      const int output_index = FirstOutputIndex(id);
      if (k == 0 && def->alias_input >= 0 && output_index < 0 && !v.info.layout.blocked &&
          present[static_cast<size_t>(def->alias_input)]) {
        // View op: share the input's buffer (its lifetime now extends through our readers).
        v.slot = in_slots[static_cast<size_t>(def->alias_input)];
        shared_slots_.insert(v.slot);
      } else if (k == 0 && reused >= 0) {
        // In place: the input's buffer (its last reader is this step) becomes the output's.
        v.slot = in_slots[static_cast<size_t>(reused)];
      } else if (output_index >= 0 && !v.info.layout.blocked && !dynamic_ahead_) {
        v.slot = AddSlot(Slot{Slot::Kind::kOutput, static_cast<size_t>(output_index), nullptr});
        written_outputs_[id] = true;
      } else {
        v.slot = AddBuffer(v.info.byte_size());
      }
      out_slots.push_back(v.slot);
    }
    // A node whose outputs are all empty has nothing to compute (and kernels need not handle a
    // zero-sized row or block): its values exist, with no bytes, and no step runs.
    // (A dynamic step always runs: it reports its shape.)
    if (AllOutputsEmpty(ctx) && !def->dynamic_output) return absl::OkStatus();
    const int scratch = ctx.scratch_bytes > 0 ? AddBuffer(ctx.scratch_bytes) : -1;
    AppendStep(std::move(kernel), std::move(in_slots), std::move(out_slots), scratch, node.name,
               node.op_type);
    plan_->steps.back().flops = EstimateFlops(node, ctx);
    plan_->total_flops += plan_->steps.back().flops;
    if (def->dynamic_output) {
      plan_->dynamic_step = static_cast<int>(plan_->steps.size() - 1);
      plan_->dynamic_capacity = ctx.outputs[0].num_elements();
      stopped_ = static_cast<int>(node.outputs[0]);
    }
    return absl::OkStatus();
  }

  absl::Status EvaluateNow(const Node& node, const KernelContext& ctx, OpKernel& kernel,
                           const std::vector<size_t>& input_index,
                           const std::vector<bool>& present) {
    std::vector<const std::byte*> in_ptrs;
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      const PlanValue& v = values_[input_index[k]];
      in_ptrs.push_back(present[k] && v.known ? v.info.constant->data() : nullptr);
    }
    std::vector<std::byte*> out_ptrs;
    std::vector<const Tensor*> results;
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      if (node.outputs[k] == kNoValue || ctx.outputs[k].dtype == DataType::kInvalid) {
        out_ptrs.push_back(nullptr);
        results.push_back(nullptr);
        continue;
      }
      BRIGADE_ASSIGN_OR_RETURN(Tensor t,
                               Tensor::Allocate(ctx.outputs[k].dtype, ctx.outputs[k].shape));
      Tensor* owned = Own(std::move(t));
      out_ptrs.push_back(owned->mutable_data());
      results.push_back(owned);
    }
    Tensor scratch;
    if (ctx.scratch_bytes > 0) {
      BRIGADE_ASSIGN_OR_RETURN(
          scratch,
          Tensor::Allocate(DataType::kUint8, Shape{static_cast<int64_t>(ctx.scratch_bytes)}));
    }
    RunContext run;
    run.inputs = in_ptrs;
    run.outputs = out_ptrs;
    run.scratch = scratch.mutable_data();
    run.stream = &stream_;
    run.threads = threads_;
    absl::Status status = AllOutputsEmpty(ctx) ? absl::OkStatus() : kernel.Run(run);
    if (!status.ok()) {
      return absl::Status(status.code(), StrCat("node '", node.name, "' (", node.op_type,
                                                "), evaluated at plan time: ", status.message()));
    }
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      if (results[k] == nullptr) continue;
      PlanValue& v = values_[static_cast<size_t>(node.outputs[k])];
      v.info = ctx.outputs[k];
      v.info.constant = results[k];
      v.known = true;
      v.defined = true;
      v.slot = AddSlot(Slot{Slot::Kind::kConstant, 0, results[k]->data()});
    }
    return absl::OkStatus();
  }

  // The in-place offer for `node` (KernelContext::reusable_inputs): inputs read for the last
  // time here, once, from an arena buffer no other value shares, when output 0 is an
  // intermediate. Called before the node's uses are counted off.
  uint32_t ReusableInputs(const Node& node, const std::vector<size_t>& input_index,
                          const std::vector<bool>& present) const {
    if (node.outputs.empty() || node.outputs[0] == kNoValue ||
        FirstOutputIndex(node.outputs[0]) >= 0) {
      return 0;
    }
    uint32_t mask = 0;
    for (size_t k = 0; k < node.inputs.size() && k < 32; ++k) {
      const ValueId id = node.inputs[k];
      if (!present[k] || input_index[k] != static_cast<size_t>(id)) continue;  // a reordered copy
      const PlanValue& v = values_[input_index[k]];
      if (v.known || std::count(node.inputs.begin(), node.inputs.end(), id) != 1 ||
          remaining_uses_[static_cast<size_t>(id)] != 1 || !slot_buffer_.contains(v.slot) ||
          shared_slots_.contains(v.slot)) {
        continue;
      }
      mask |= 1u << k;
    }
    return mask;
  }

  int FirstOutputIndex(ValueId id) const {
    const auto& outs = graph_.outputs();
    for (size_t j = 0; j < outs.size(); ++j) {
      if (outs[j] == id) return static_cast<int>(j);
    }
    return -1;
  }

  absl::Status BindOutputs() {
    const auto& outs = graph_.outputs();
    plan_->output_bindings.resize(outs.size());
    for (size_t j = 0; j < outs.size(); ++j) {
      const ValueId id = outs[j];
      size_t index = static_cast<size_t>(id);
      if (!values_[index].defined) {
        return absl::InvalidArgumentError(
            StrCat("graph output '", values_[index].name, "' is never computed"));
      }
      ExecutionPlan::OutputBinding& binding = plan_->output_bindings[j];
      const int first = FirstOutputIndex(id);
      if (first < static_cast<int>(j)) {
        binding.kind = ExecutionPlan::OutputBinding::Kind::kSameAs;
        binding.source = first;
      } else if (written_outputs_.contains(id)) {
        binding.kind = ExecutionPlan::OutputBinding::Kind::kWritten;
      } else if (values_[index].info.layout.blocked) {
        // Reorder straight into the output tensor.
        const PlanValue& v = values_[index];
        const auto type = ToDnnlType(v.info.dtype);
        BRIGADE_ASSIGN_OR_RETURN(
            std::unique_ptr<OpKernel> kernel,
            MakeReorderKernel(target_.engine, v.info.layout.desc, PlainDesc(v.info.shape, *type)));
        Use(v.slot);
        const int out_slot = AddSlot(Slot{Slot::Kind::kOutput, j, nullptr});
        AppendStep(std::move(kernel), {v.slot}, {out_slot}, -1, StrCat(v.name, "/output"),
                   "Reorder");
        binding.kind = ExecutionPlan::OutputBinding::Kind::kWritten;
      } else {
        binding.kind = ExecutionPlan::OutputBinding::Kind::kCopy;
        binding.source = values_[index].slot;
        // Keep the source alive to the end of the run.
        auto it = slot_buffer_.find(binding.source);
        if (it != slot_buffer_.end()) {
          buffers_[static_cast<size_t>(it->second)].last_step =
              static_cast<int>(plan_->steps.size());
        }
      }
      plan_->output_types.push_back(values_[index].info.dtype);
      plan_->output_shapes.push_back(values_[index].info.shape);
    }
    return absl::OkStatus();
  }

  void AssignArena() {
    const MemoryPlan memory = PlanMemory(buffers_);
    plan_->arena_bytes = memory.arena_bytes;
    for (size_t b = 0; b < buffers_.size(); ++b) {
      for (int slot : buffer_slots_[b]) {
        plan_->slots[static_cast<size_t>(slot)].index = memory.offsets[b];
      }
    }
  }

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

struct PlannerState {
  PlanTarget target;
  int threads = 1;
  size_t next_node = 0;  // the first node the continuation plans
  std::deque<PlanValue> values;
  std::vector<int> remaining_uses;
  // Per value: the continuation input it arrives as (graph inputs first, then the carried
  // buffers, ExecutionPlan::carried_slots), or -1 (known, or read by no later node).
  std::vector<int> input_of_value;
  size_t dynamic_value = 0;  // the dynamic step's output
};

absl::StatusOr<std::unique_ptr<ExecutionPlan>> Planner::Build() {
  size_t first = 0;
  if (resume_ == nullptr) {
    values_.resize(graph_.num_values());
    for (size_t i = 0; i < graph_.num_values(); ++i) {
      values_[i].name = graph_.value(static_cast<ValueId>(i)).name;
    }
    BRIGADE_RETURN_IF_ERROR(BindInputsAndConstants());
    remaining_uses_ = target_.use_counts;
  } else {
    Resume();
    first = resume_->next_node;
  }
  const auto& nodes = graph_.nodes();
  for (size_t n = first; n < nodes.size(); ++n) {
    const KernelDef* def =
        KernelRegistry::Get().Find(nodes[n].domain, nodes[n].op_type, nodes[n].opset);
    if (def != nullptr && def->dynamic_output) dynamic_ahead_ = true;
  }
  for (size_t n = first; n < nodes.size(); ++n) {
    BRIGADE_RETURN_IF_ERROR(PlanNode(nodes[n]));
    if (stopped_ >= 0) {
      if (shape_only_) return std::move(plan_);  // later values stay undefined
      StopAfter(n + 1);
      AssignArena();
      return std::move(plan_);
    }
  }
  if (shape_only_) return std::move(plan_);
  BRIGADE_RETURN_IF_ERROR(BindOutputs());
  AssignArena();
  return std::move(plan_);
}

void Planner::StopAfter(size_t next_node) {
  auto state = std::make_shared<PlannerState>(PlannerState{.target = target_,
                                                           .threads = threads_,
                                                           .next_node = next_node,
                                                           .values = values_,
                                                           .remaining_uses = remaining_uses_,
                                                           .input_of_value = {},
                                                           .dynamic_value = 0});
  state->dynamic_value = static_cast<size_t>(stopped_);
  // A value is needed later when a later node or a graph output reads it; a plain-layout copy
  // when its original is.
  std::vector<bool> needed(values_.size(), false);
  for (size_t i = 0; i < values_.size() && i < remaining_uses_.size(); ++i) {
    needed[i] = values_[i].defined && remaining_uses_[i] > 0;
    if (needed[i] && values_[i].plain_copy >= 0) {
      needed[static_cast<size_t>(values_[i].plain_copy)] = true;
    }
  }
  const size_t graph_inputs = graph_.inputs().size();
  std::map<int, int> carried;  // slot → continuation input
  state->input_of_value.assign(values_.size(), -1);
  for (size_t i = 0; i < values_.size(); ++i) {
    const PlanValue& v = values_[i];
    if (!needed[i] || v.known || v.slot < 0) continue;
    const Slot& slot = plan_->slots[static_cast<size_t>(v.slot)];
    BRIGADE_CHECK(slot.kind == Slot::Kind::kInput || slot.kind == Slot::Kind::kArena,
                  "before a dynamic step, values live in inputs, constants or the arena");
    if (slot.kind == Slot::Kind::kInput) {
      state->input_of_value[i] = static_cast<int>(slot.index);
      continue;
    }
    auto [it, inserted] = carried.emplace(v.slot, static_cast<int>(graph_inputs + carried.size()));
    if (inserted) {
      plan_->carried_slots.push_back(v.slot);
      Use(v.slot);  // alive to the end of this plan, where the continuation reads it
    }
    state->input_of_value[i] = it->second;
  }
  plan_->plan_continuation = [state](const Shape& shape, dnnl::stream& stream) {
    Planner planner(state->target, {}, state->threads, stream, /*shape_only=*/false, state.get(),
                    &shape);
    return planner.Build();
  };
}

void Planner::Resume() {
  values_ = resume_->values;
  remaining_uses_ = resume_->remaining_uses;
  for (size_t i = 0; i < values_.size(); ++i) {
    PlanValue& v = values_[i];
    if (!v.defined) continue;
    if (v.known) {
      v.slot = AddSlot(Slot{Slot::Kind::kConstant, 0, v.info.constant->data()});
    } else if (resume_->input_of_value[i] >= 0) {
      v.slot = AddSlot(
          Slot{Slot::Kind::kInput, static_cast<size_t>(resume_->input_of_value[i]), nullptr});
    } else {
      v.slot = -1;  // no later node reads it
    }
  }
  values_[resume_->dynamic_value].info.shape = *dynamic_shape_;
}

// `model`'s main graph as a plan target; `releaser` (PlanAndReleaseSources only) is told of each
// constant once its last reader is built.
PlanTarget MainGraph(const CompiledModel& model, CompiledModel* releaser = nullptr) {
  return {.graph = model.graph(),
          .use_counts = model.use_counts(),
          .engine = model.engine(),
          .weights = model.weights(),
          .precision = model.precision(),
          .released_keys = &model.released_keys(),
          .releaser = releaser};
}

// The main graph's input descriptions for `inputs`: the contents of shape inputs are known.
std::vector<ValueInfo> DescribeInputs(const CompiledModel& model, std::span<const Tensor> inputs) {
  std::vector<ValueInfo> infos(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    infos[i].dtype = inputs[i].dtype();
    infos[i].shape = inputs[i].shape();
    if (i < model.shape_inputs().size() && model.shape_inputs()[i]) infos[i].constant = &inputs[i];
  }
  return infos;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ExecutionPlan>> BuildPlan(const CompiledModel& model,
                                                         std::span<const Tensor> inputs,
                                                         int threads, dnnl::stream& stream) {
  const PlanTarget target = MainGraph(model);
  const std::vector<ValueInfo> infos = DescribeInputs(model, inputs);
  Planner planner(target, infos, threads, stream, /*shape_only=*/false);
  return planner.Build();
}

absl::Status PlanAndReleaseSources(CompiledModel& model, std::span<const Tensor> inputs) {
  try {
    dnnl::stream stream(model.engine());
    const PlanTarget target = MainGraph(model, &model);
    const std::vector<ValueInfo> infos = DescribeInputs(model, inputs);
    Planner planner(target, infos, 1, stream, /*shape_only=*/false);
    return planner.Build().status();
  } catch (const dnnl::error& e) {
    return absl::InternalError(StrCat("oneDNN stream: ", e.what()));
  }
}

absl::StatusOr<std::vector<std::optional<Shape>>> PropagateShapes(const CompiledModel& model,
                                                                  std::span<const Tensor> inputs) {
  try {
    dnnl::stream stream(model.engine());
    const PlanTarget target = MainGraph(model);
    const std::vector<ValueInfo> infos = DescribeInputs(model, inputs);
    Planner planner(target, infos, 1, stream, /*shape_only=*/true);
    BRIGADE_RETURN_IF_ERROR(planner.Build().status());
    return planner.Shapes();
  } catch (const dnnl::error& e) {
    return absl::InternalError(StrCat("oneDNN stream: ", e.what()));
  }
}

absl::StatusOr<SubgraphPlan> PlanSubgraph(const Graph& graph, std::span<const ValueInfo> inputs,
                                          const KernelContext& ctx) {
  const std::vector<int> use_counts = CountUses(graph);
  const PlanTarget target{.graph = graph,
                          .use_counts = use_counts,
                          .engine = *ctx.engine,
                          .weights = *ctx.weights,
                          .precision = ctx.precision,
                          .subgraph = true};
  try {
    // Plan-time evaluation inside the subgraph runs on a stream of its own: kernel factories
    // are not handed the enclosing planner's.
    dnnl::stream stream(*ctx.engine);
    Planner planner(target, inputs, ctx.threads, stream, ctx.shape_only);
    SubgraphPlan result;
    BRIGADE_ASSIGN_OR_RETURN(result.plan, planner.Build());
    result.outputs = planner.OutputInfos();
    return result;
  } catch (const dnnl::error& e) {
    return absl::InternalError(StrCat("oneDNN stream: ", e.what()));
  }
}

}  // namespace brigade::engine::onnx
