// Planning one node (planner_internal.h): its inputs, its kernel, its evaluation at plan time
// when everything it reads is known, or else its step in the plan.

#include <algorithm>
#include <utility>

#include "core/status_macros.h"
#include "core/strings.h"
#include "engine/onnx/exec/flops.h"
#include "engine/onnx/exec/planner_internal.h"
#include "engine/onnx/kernels/dnnl_util.h"
#include "engine/onnx/kernels/kernel_util.h"
#include "engine/onnx/kernels/registry.h"

namespace brigade::engine::onnx::planner_internal {
namespace {

// Most bytes the nodes evaluated at plan time may produce, all together: shape subgraphs take
// bytes, while a hostile model's chain of ConstantOfShape/Expand nodes could otherwise pin one
// such budget per node. What does not fit runs in the arena, whose size the session bounds.
constexpr size_t kMaxPlanTimeBytes = size_t{256} << 20;
// The same in shape-only mode, where only shape subgraphs (a few bytes) need evaluating: a large
// value evaluated there is thrown away, so it only costs load time.
constexpr size_t kMaxShapeOnlyBytes = size_t{4} << 20;

// The bytes evaluating the node at plan time takes: its described outputs and its scratch.
size_t PlanTimeResultBytes(const KernelContext& ctx) {
  size_t bytes = ctx.scratch_bytes;
  for (const ValueInfo& out : ctx.outputs) {
    if (out.dtype != DataType::kInvalid) bytes += out.byte_size();
  }
  return bytes;
}

}  // namespace

absl::Status Planner::PlanNode(const Node& node) {
  const KernelDef* def = KernelRegistry::Get().Find(node.domain, node.op_type, node.opset);
  if (def == nullptr) {
    return absl::UnimplementedError(
        StrCat("node '", node.name, "' (", node.op_type, "): no kernel for opset ", node.opset));
  }
  BRIGADE_ASSIGN_OR_RETURN(const NodeInputs in, ResolveInputs(node, *def));
  KernelContext ctx = NodeContext(node, in);
  CountOffUses(node);
  BRIGADE_RETURN_IF_ERROR(CheckDynamicOutput(node, *def));
  BRIGADE_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> kernel, CreateKernel(node, *def, ctx));
  BRIGADE_RETURN_IF_ERROR(CheckOutputsDescribed(node, ctx));
  BRIGADE_RETURN_IF_ERROR(CheckOutputSizes(ctx));
  if (kernel != nullptr && in.all_known && FoldsNow(*def, ctx)) {
    plan_time_bytes_ += PlanTimeResultBytes(ctx);
    return EvaluateNow(node, ctx, *kernel, in);
  }
  if (shape_only_) {
    DescribeOutputs(node, *def, ctx);
    return absl::OkStatus();
  }
  if (kernel == nullptr) return absl::InternalError("kernel factory returned no kernel");
  BRIGADE_RETURN_IF_ERROR(CheckInPlace(node, ctx));
  AppendNodeStep(node, *def, std::move(kernel), ctx, in);
  return absl::OkStatus();
}

absl::StatusOr<Planner::NodeInputs> Planner::ResolveInputs(const Node& node, const KernelDef& def) {
  NodeInputs in{.index = std::vector<size_t>(node.inputs.size(), 0),
                .present = std::vector<bool>(node.inputs.size(), false)};
  std::vector<const ValueInfo*> as_read;  // the inputs as they are, before any reorder
  for (ValueId id : node.inputs) {
    const bool defined = id != kNoValue && values_[static_cast<size_t>(id)].defined;
    as_read.push_back(defined ? &values_[static_cast<size_t>(id)].info : nullptr);
  }
  const std::vector<bool> value_inputs = def.ValueInputs(node);
  for (size_t k = 0; k < node.inputs.size(); ++k) {
    const ValueId id = node.inputs[k];
    if (id == kNoValue) continue;
    size_t index = static_cast<size_t>(id);
    if (!values_[index].defined) {
      return absl::InvalidArgumentError(StrCat("node '", node.name, "' (", node.op_type,
                                               "): input '", values_[index].name,
                                               "' is not computed before it"));
    }
    if (values_[index].info.layout.blocked && def.reads_input_data &&
        !def.TakesBlocked(node, k, as_read)) {
      BRIGADE_ASSIGN_OR_RETURN(index, Plain(index));
    }
    in.index[k] = index;
    in.present[k] = true;
    if (!values_[index].known && def.reads_input_data) in.all_known = false;
    if (k < value_inputs.size() && value_inputs[k] && !values_[index].known) {
      return absl::InvalidArgumentError(StrCat("node '", node.name, "' (", node.op_type,
                                               "): input ", k, " ('", values_[index].name,
                                               "') decides a shape but is only known at run time"));
    }
  }
  return in;
}

KernelContext Planner::NodeContext(const Node& node, const NodeInputs& in) const {
  KernelContext ctx;
  ctx.node = &node;
  if (!shape_only_) ctx.reusable_inputs = ReusableInputs(node, in);
  for (size_t k = 0; k < node.inputs.size(); ++k) {
    ctx.inputs.push_back(in.present[k] ? &values_[in.index[k]].info : nullptr);
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
  return ctx;
}

uint32_t Planner::ReusableInputs(const Node& node, const NodeInputs& in) const {
  if (node.outputs.empty() || node.outputs[0] == kNoValue ||
      FirstOutputIndex(node.outputs[0]) >= 0) {
    return 0;
  }
  uint32_t mask = 0;
  for (size_t k = 0; k < node.inputs.size() && k < 32; ++k) {
    const ValueId id = node.inputs[k];
    if (!in.present[k] || in.index[k] != static_cast<size_t>(id)) continue;  // a reordered copy
    const PlanValue& v = values_[in.index[k]];
    if (v.known || std::count(node.inputs.begin(), node.inputs.end(), id) != 1 ||
        remaining_uses_[static_cast<size_t>(id)] != 1 || !slot_buffer_.contains(v.slot) ||
        shared_slots_.contains(v.slot)) {
      continue;
    }
    mask |= 1u << k;
  }
  return mask;
}

void Planner::CountOffUses(const Node& node) {
  for (ValueId id : node.inputs) {
    if (id != kNoValue) --remaining_uses_[static_cast<size_t>(id)];
  }
}

absl::Status Planner::CheckDynamicOutput(const Node& node, const KernelDef& def) const {
  if (def.dynamic_output && target_.subgraph) {
    return absl::UnimplementedError(
        StrCat("node '", node.name, "' (", node.op_type,
               "): an output shape that depends on the data is not supported in a subgraph"));
  }
  if (def.dynamic_output && (node.outputs.size() != 1 || node.outputs[0] == kNoValue)) {
    return absl::InternalError(StrCat("node '", node.name, "' (", node.op_type,
                                      "): a dynamic-output kernel needs exactly one output"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<OpKernel>> Planner::CreateKernel(const Node& node,
                                                                const KernelDef& def,
                                                                KernelContext& ctx) {
  BRIGADE_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> kernel, def.create(ctx));
  if (shape_only_) return kernel;
  BRIGADE_ASSIGN_OR_RETURN(const bool rebuilt, RebuildUnpackedSources(node, ctx));
  if (rebuilt) {
    // The inputs now point at the rebuilt sources; describe the outputs afresh.
    ctx.outputs.assign(node.outputs.size(), ValueInfo{});
    ctx.scratch_bytes = 0;
    ctx.output_reuses_input = -1;
    ctx.released_sources_packed = 0;
    BRIGADE_ASSIGN_OR_RETURN(kernel, def.create(ctx));
  }
  ReleaseReadSources(node);
  return kernel;
}

absl::StatusOr<bool> Planner::RebuildUnpackedSources(const Node& node, const KernelContext& ctx) {
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

void Planner::ReleaseReadSources(const Node& node) {
  if (target_.releaser == nullptr) return;
  for (ValueId id : node.inputs) {
    if (id != kNoValue && remaining_uses_[static_cast<size_t>(id)] == 0) {
      target_.releaser->ReleaseIfPacked(id);
    }
  }
}

absl::Status Planner::CheckOutputsDescribed(const Node& node, const KernelContext& ctx) const {
  for (size_t k = 0; k < node.outputs.size(); ++k) {
    if (node.outputs[k] != kNoValue && ctx.outputs[k].dtype == DataType::kInvalid &&
        ctx.output_used[k]) {
      return absl::InternalError(StrCat("node '", node.name, "' (", node.op_type,
                                        "): kernel left output ", k, " undescribed"));
    }
  }
  return absl::OkStatus();
}

bool Planner::FoldsNow(const KernelDef& def, const KernelContext& ctx) const {
  bool outputs_plain = true;
  for (const ValueInfo& out : ctx.outputs) outputs_plain = outputs_plain && !out.layout.blocked;
  return def.foldable && !def.dynamic_output && outputs_plain &&
         PlanTimeResultBytes(ctx) <=
             (shape_only_ ? kMaxShapeOnlyBytes : kMaxPlanTimeBytes) - plan_time_bytes_;
}

absl::Status Planner::EvaluateNow(const Node& node, const KernelContext& ctx, OpKernel& kernel,
                                  const NodeInputs& in) {
  std::vector<const std::byte*> in_ptrs;
  for (size_t k = 0; k < node.inputs.size(); ++k) {
    const PlanValue& v = values_[in.index[k]];
    in_ptrs.push_back(in.present[k] && v.known ? v.info.constant->data() : nullptr);
  }
  std::vector<const Tensor*> results;
  std::vector<std::byte*> out_ptrs;
  BRIGADE_RETURN_IF_ERROR(AllocateResults(node, ctx, &results, &out_ptrs));
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

absl::Status Planner::AllocateResults(const Node& node, const KernelContext& ctx,
                                      std::vector<const Tensor*>* results,
                                      std::vector<std::byte*>* out_ptrs) {
  for (size_t k = 0; k < node.outputs.size(); ++k) {
    if (node.outputs[k] == kNoValue || ctx.outputs[k].dtype == DataType::kInvalid) {
      out_ptrs->push_back(nullptr);
      results->push_back(nullptr);
      continue;
    }
    BRIGADE_ASSIGN_OR_RETURN(Tensor t,
                             Tensor::Allocate(ctx.outputs[k].dtype, ctx.outputs[k].shape));
    Tensor* owned = Own(std::move(t));
    out_ptrs->push_back(owned->mutable_data());
    results->push_back(owned);
  }
  return absl::OkStatus();
}

void Planner::DescribeOutputs(const Node& node, const KernelDef& def, const KernelContext& ctx) {
  if (def.dynamic_output) {
    stopped_ = static_cast<int>(node.outputs[0]);
    return;
  }
  for (size_t k = 0; k < node.outputs.size(); ++k) {
    if (node.outputs[k] == kNoValue) continue;
    PlanValue& v = values_[static_cast<size_t>(node.outputs[k])];
    v.info = ctx.outputs[k];
    v.info.constant = nullptr;
    v.defined = true;
  }
}

absl::Status Planner::CheckInPlace(const Node& node, const KernelContext& ctx) const {
  const int reused = ctx.output_reuses_input;
  if (reused < 0) return absl::OkStatus();
  const ValueInfo* in = ctx.inputs[static_cast<size_t>(reused)];
  const ValueInfo& out = ctx.outputs[0];
  if (!ctx.input_reusable(static_cast<size_t>(reused)) || in->dtype != out.dtype ||
      in->shape != out.shape || in->layout.blocked != out.layout.blocked ||
      (in->layout.blocked && in->layout.desc != out.layout.desc)) {
    return absl::InternalError(StrCat("node '", node.name, "' (", node.op_type,
                                      "): output 0 cannot take input ", reused, "'s buffer"));
  }
  return absl::OkStatus();
}

void Planner::AppendNodeStep(const Node& node, const KernelDef& def,
                             std::unique_ptr<OpKernel> kernel, const KernelContext& ctx,
                             const NodeInputs& in) {
  std::vector<int> in_slots = InputSlots(node, in);
  std::vector<int> out_slots = OutputSlots(node, def, ctx, in, in_slots);
  // A node whose outputs are all empty has nothing to compute (and kernels need not handle a
  // zero-sized row or block): its values exist, with no bytes, and no step runs.
  // (A dynamic step always runs: it reports its shape.)
  if (AllOutputsEmpty(ctx) && !def.dynamic_output) return;
  const int scratch = ctx.scratch_bytes > 0 ? AddBuffer(ctx.scratch_bytes) : -1;
  AppendStep(std::move(kernel), std::move(in_slots), std::move(out_slots), scratch, node.name,
             node.op_type);
  plan_->steps.back().flops = EstimateFlops(node, ctx);
  plan_->total_flops += plan_->steps.back().flops;
  if (def.dynamic_output) {
    plan_->dynamic_step = static_cast<int>(plan_->steps.size() - 1);
    plan_->dynamic_capacity = ctx.outputs[0].num_elements();
    stopped_ = static_cast<int>(node.outputs[0]);
  }
}

std::vector<int> Planner::InputSlots(const Node& node, const NodeInputs& in) {
  std::vector<int> in_slots;
  for (size_t k = 0; k < node.inputs.size(); ++k) {
    if (!in.present[k]) {
      in_slots.push_back(-1);
      continue;
    }
    const int slot = values_[in.index[k]].slot;
    Use(slot);
    in_slots.push_back(slot);
  }
  return in_slots;
}

std::vector<int> Planner::OutputSlots(const Node& node, const KernelDef& def,
                                      const KernelContext& ctx, const NodeInputs& in,
                                      const std::vector<int>& in_slots) {
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
    v.slot = OutputSlot(node, k, def, ctx, in, in_slots);
    out_slots.push_back(v.slot);
  }
  return out_slots;
}

int Planner::OutputSlot(const Node& node, size_t k, const KernelDef& def, const KernelContext& ctx,
                        const NodeInputs& in, const std::vector<int>& in_slots) {
  const ValueId id = node.outputs[k];
  const PlanValue& v = values_[static_cast<size_t>(id)];
  const int output_index = FirstOutputIndex(id);
  const int reused = ctx.output_reuses_input;
  if (k == 0 && def.alias_input >= 0 && output_index < 0 && !v.info.layout.blocked &&
      in.present[static_cast<size_t>(def.alias_input)]) {
    // View op: share the input's buffer (its lifetime now extends through our readers).
    const int slot = in_slots[static_cast<size_t>(def.alias_input)];
    shared_slots_.insert(slot);
    return slot;
  }
  if (k == 0 && reused >= 0) {
    // In place: the input's buffer (its last reader is this step) becomes the output's.
    return in_slots[static_cast<size_t>(reused)];
  }
  if (output_index >= 0 && !v.info.layout.blocked && !dynamic_ahead_) {
    written_outputs_[id] = true;
    return AddSlot(Slot{Slot::Kind::kOutput, static_cast<size_t>(output_index), nullptr});
  }
  return AddBuffer(v.info.byte_size());
}

}  // namespace brigade::engine::onnx::planner_internal
