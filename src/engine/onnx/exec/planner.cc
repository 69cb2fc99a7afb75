#include "engine/onnx/exec/planner.h"

#include <algorithm>
#include <utility>

#include "core/status_macros.h"
#include "core/strings.h"
#include "engine/onnx/exec/memory_planner.h"
#include "engine/onnx/exec/planner_internal.h"
#include "engine/onnx/kernels/dnnl_util.h"
#include "engine/onnx/kernels/registry.h"
#include "engine/onnx/kernels/reorder.h"

namespace brigade::engine::onnx {
namespace planner_internal {

absl::StatusOr<std::unique_ptr<ExecutionPlan>> Planner::Build() {
  size_t first = 0;
  if (resume_ == nullptr) {
    BRIGADE_RETURN_IF_ERROR(Start());
  } else {
    first = Resume();
  }
  dynamic_ahead_ = DynamicNodeAhead(first);
  const auto& nodes = graph_.nodes();
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

std::vector<std::optional<Shape>> Planner::Shapes() const {
  std::vector<std::optional<Shape>> shapes(graph_.num_values());
  for (size_t i = 0; i < graph_.num_values(); ++i) {
    if (values_[i].defined && values_[i].info.dtype != DataType::kInvalid) {
      shapes[i] = values_[i].info.shape;
    }
  }
  return shapes;
}

std::vector<ValueInfo> Planner::OutputInfos() const {
  std::vector<ValueInfo> infos;
  for (ValueId id : graph_.outputs()) {
    const PlanValue& v = values_[static_cast<size_t>(id)];
    infos.push_back(v.info);
    if (!v.known) infos.back().constant = nullptr;
  }
  return infos;
}

absl::Status Planner::Start() {
  values_.resize(graph_.num_values());
  for (size_t i = 0; i < graph_.num_values(); ++i) {
    values_[i].name = graph_.value(static_cast<ValueId>(i)).name;
  }
  BRIGADE_RETURN_IF_ERROR(BindInputs());
  BindConstants();
  remaining_uses_ = target_.use_counts;
  return absl::OkStatus();
}

bool Planner::DynamicNodeAhead(size_t first) const {
  const auto& nodes = graph_.nodes();
  for (size_t n = first; n < nodes.size(); ++n) {
    const KernelDef* def =
        KernelRegistry::Get().Find(nodes[n].domain, nodes[n].op_type, nodes[n].opset);
    if (def != nullptr && def->dynamic_output) return true;
  }
  return false;
}

int Planner::AddSlot(Slot slot) {
  plan_->slots.push_back(slot);
  return static_cast<int>(plan_->slots.size() - 1);
}

int Planner::AddBuffer(size_t bytes) {
  const int step = static_cast<int>(plan_->steps.size());
  buffers_.push_back(BufferLifetime{bytes, step, step});
  buffer_slots_.emplace_back();
  const int slot = AddSlot(Slot{Slot::Kind::kArena, 0, nullptr});
  buffer_slots_.back().push_back(slot);
  slot_buffer_[slot] = static_cast<int>(buffers_.size() - 1);
  return slot;
}

void Planner::Use(int slot) {
  auto it = slot_buffer_.find(slot);
  if (it == slot_buffer_.end()) return;
  BufferLifetime& b = buffers_[static_cast<size_t>(it->second)];
  b.last_step = std::max(b.last_step, static_cast<int>(plan_->steps.size()));
}

Tensor* Planner::Own(Tensor tensor) {
  plan_->owned.push_back(std::make_unique<Tensor>(std::move(tensor)));
  return plan_->owned.back().get();
}

absl::Status Planner::BindInputs() {
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
  return absl::OkStatus();
}

void Planner::BindConstants() {
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
}

bool Planner::Released(ValueId id) const {
  const auto index = static_cast<size_t>(id);
  return target_.released_keys != nullptr && index < target_.released_keys->size() &&
         !(*target_.released_keys)[index].empty() && !values_[index].known;
}

absl::Status Planner::CheckDeclared(ValueId id, const ValueInfo& given) const {
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

absl::StatusOr<size_t> Planner::Plain(size_t index) {
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

void Planner::AppendStep(std::unique_ptr<OpKernel> kernel, std::vector<int> inputs,
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

int Planner::FirstOutputIndex(ValueId id) const {
  const auto& outs = graph_.outputs();
  for (size_t j = 0; j < outs.size(); ++j) {
    if (outs[j] == id) return static_cast<int>(j);
  }
  return -1;
}

absl::Status Planner::BindOutputs() {
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
      BRIGADE_RETURN_IF_ERROR(ReorderIntoOutput(index, j));
      binding.kind = ExecutionPlan::OutputBinding::Kind::kWritten;
    } else {
      binding.kind = ExecutionPlan::OutputBinding::Kind::kCopy;
      binding.source = values_[index].slot;
      // Keep the source alive to the end of the run.
      auto it = slot_buffer_.find(binding.source);
      if (it != slot_buffer_.end()) {
        buffers_[static_cast<size_t>(it->second)].last_step = static_cast<int>(plan_->steps.size());
      }
    }
    plan_->output_types.push_back(values_[index].info.dtype);
    plan_->output_shapes.push_back(values_[index].info.shape);
  }
  return absl::OkStatus();
}

absl::Status Planner::ReorderIntoOutput(size_t index, size_t j) {
  const PlanValue& v = values_[index];
  const auto type = ToDnnlType(v.info.dtype);
  BRIGADE_ASSIGN_OR_RETURN(
      std::unique_ptr<OpKernel> kernel,
      MakeReorderKernel(target_.engine, v.info.layout.desc, PlainDesc(v.info.shape, *type)));
  Use(v.slot);
  const int out_slot = AddSlot(Slot{Slot::Kind::kOutput, j, nullptr});
  AppendStep(std::move(kernel), {v.slot}, {out_slot}, -1, StrCat(v.name, "/output"), "Reorder");
  return absl::OkStatus();
}

void Planner::AssignArena() {
  const MemoryPlan memory = PlanMemory(buffers_);
  plan_->arena_bytes = memory.arena_bytes;
  for (size_t b = 0; b < buffers_.size(); ++b) {
    for (int slot : buffer_slots_[b]) {
      plan_->slots[static_cast<size_t>(slot)].index = memory.offsets[b];
    }
  }
}

}  // namespace planner_internal

namespace {

using planner_internal::Planner;
using planner_internal::PlanTarget;

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
