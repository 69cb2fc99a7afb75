#include "engine/onnx/exec/control_flow.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/status_macros.h"
#include "core/strings.h"
#include "engine/onnx/exec/compiled_model.h"
#include "engine/onnx/exec/execution_plan.h"
#include "engine/onnx/exec/planner.h"
#include "engine/onnx/exec/subgraph_util.h"
#include "engine/onnx/kernels/kernel_util.h"
#include "engine/onnx/kernels/registry.h"

namespace brigade::engine::onnx {
namespace {

// A scalar-like (one element) input of `dtype`, or INVALID_ARGUMENT.
absl::Status CheckScalar(const KernelContext& ctx, size_t input, DataType dtype,
                         std::string_view what) {
  const ValueInfo& info = ctx.input(input);
  if (info.dtype != dtype || info.num_elements() != 1) {
    return ctx.Error(what, " must be one ", DataTypeName(dtype), " element, got ", Describe(info));
  }
  return absl::OkStatus();
}

// The shape a scalar formal input of the body declares, when static with one element ([] or
// [1]); [] otherwise.
Shape ScalarShape(const Graph& graph, size_t input) {
  const Value& v = graph.value(graph.inputs()[input]);
  if (!v.shape.has_value()) return Shape{};
  int64_t count = 1;
  for (int64_t d : *v.shape) count = d < 0 ? -1 : count * d;
  return count == 1 ? *v.shape : Shape{};
}

// ---------------------------------------------------------------------------------------------
// If

class IfKernel final : public OpKernel {
 public:
  struct Branch {
    std::unique_ptr<ExecutionPlan> plan;
    std::vector<int> captures;
    std::vector<const std::byte*> inputs;  // reused by Run
    std::vector<std::byte*> outputs;       // reused by Run
  };

  absl::Status Run(const RunContext& ctx) override {
    const bool cond = taken_ >= 0 ? taken_ == 0 : *ctx.in<uint8_t>(0) != 0;
    Branch& branch = branches_[cond ? 0 : 1];
    for (size_t j = 0; j < branch.captures.size(); ++j) {
      branch.inputs[j] = ctx.inputs[static_cast<size_t>(branch.captures[j])];
    }
    for (size_t k = 0; k < branch.outputs.size(); ++k) {
      branch.outputs[k] =
          ctx.outputs[k] != nullptr ? ctx.outputs[k] : ctx.scratch + dropped_offsets_[k];
    }
    return branch.plan->RunOnBuffers(branch.inputs, branch.outputs, ctx.scratch, *ctx.stream,
                                     ctx.threads);
  }

  // 0 (then) or 1 (else) when the condition is known at plan time; -1 otherwise.
  int taken_ = -1;
  Branch branches_[2];
  std::vector<size_t> dropped_offsets_;  // scratch for outputs the node omits
};

absl::StatusOr<std::unique_ptr<OpKernel>> CreateIf(KernelContext& ctx) {
  const Node& node = *ctx.node;
  const Attribute* branches[2] = {node.attributes.GetGraph("then_branch"),
                                  node.attributes.GetGraph("else_branch")};
  const char* names[2] = {"then_branch", "else_branch"};
  if (branches[0] == nullptr || branches[1] == nullptr) {
    return ctx.Error("needs subgraphs then_branch and else_branch");
  }
  if (!ctx.has_input(0)) return ctx.Error("needs a condition input");
  BRIGADE_RETURN_IF_ERROR(CheckScalar(ctx, 0, DataType::kBool, "the condition"));
  auto kernel = std::make_unique<IfKernel>();
  if (const Tensor* cond = ctx.input(0).constant; cond != nullptr) {
    // Known now: only the taken branch is planned (and may have shapes of its own).
    kernel->taken_ = cond->values<bool>()[0] ? 0 : 1;
  }
  std::vector<ValueInfo> outputs[2];
  size_t arena_bytes = 0;
  for (int b = 0; b < 2; ++b) {
    const Attribute& branch = *branches[b];
    BRIGADE_RETURN_IF_ERROR(CheckCaptures(ctx, branch, names[b]));
    if (FormalInputs(branch) != 0) {
      return ctx.Error(names[b], " has ", FormalInputs(branch), " inputs; If branches take none");
    }
    if (branch.g->outputs().size() != node.outputs.size()) {
      return ctx.Error(names[b], " has ", branch.g->outputs().size(), " outputs, the node ",
                       node.outputs.size());
    }
    if (kernel->taken_ >= 0 && kernel->taken_ != b) continue;
    std::vector<ValueInfo> inputs;
    AppendCaptured(ctx, branch, &inputs);
    BRIGADE_ASSIGN_OR_RETURN(SubgraphPlan planned,
                             PlanNamedSubgraph(ctx, branch, inputs, names[b]));
    outputs[b] = std::move(planned.outputs);
    arena_bytes = std::max(arena_bytes, planned.plan->arena_bytes);
    kernel->branches_[b].plan = std::move(planned.plan);
    kernel->branches_[b].captures = branch.captures;
    kernel->branches_[b].inputs.resize(branch.captures.size());
    kernel->branches_[b].outputs.resize(node.outputs.size());
  }
  const int described = kernel->taken_ >= 0 ? kernel->taken_ : 0;
  for (size_t k = 0; k < node.outputs.size(); ++k) {
    const ValueInfo& a = outputs[described][k];
    if (kernel->taken_ < 0) {
      const ValueInfo& b = outputs[1][k];
      if (a.dtype != b.dtype || a.shape != b.shape) {
        return ctx.Unsupported("output ", k, " is ", Describe(a), " in then_branch but ",
                               Describe(b),
                               " in else_branch for these inputs; Brigade plans one type and "
                               "shape per value, so both branches must agree");
      }
    }
    ctx.SetOutput(k, a.dtype, a.shape);
  }
  ScratchLayout scratch;
  scratch.Add(arena_bytes);
  kernel->dropped_offsets_.assign(node.outputs.size(), 0);
  for (size_t k = 0; k < node.outputs.size(); ++k) {
    if (node.outputs[k] == kNoValue) {
      kernel->dropped_offsets_[k] = scratch.Add(ctx.outputs[k].byte_size());
    }
  }
  ctx.scratch_bytes = scratch.bytes();
  if (ctx.shape_only) return std::unique_ptr<OpKernel>();
  return kernel;
}

std::vector<bool> IfValueInputs(const Node& node) { return CapturedValueInputs(node); }

// ---------------------------------------------------------------------------------------------
// Loop

// The Loop body's layout: inputs (iteration number, condition, N carried, captured...), outputs
// (condition, N carried, K scan outputs).
struct LoopShape {
  size_t carried = 0;
  size_t scans = 0;
};

absl::StatusOr<LoopShape> ShapeOfLoop(const KernelContext& ctx, const Attribute& body) {
  const Node& node = *ctx.node;
  const size_t formal = FormalInputs(body);
  if (formal < 2) {
    return ctx.Error("the body has ", formal,
                     " inputs; it needs the iteration number, the condition and the loop-carried "
                     "values");
  }
  LoopShape shape;
  shape.carried = formal - 2;
  if (body.g->outputs().size() < 1 + shape.carried) {
    return ctx.Error("the body has ", body.g->outputs().size(), " outputs for ", shape.carried,
                     " loop-carried values; it needs the condition and each of them");
  }
  shape.scans = body.g->outputs().size() - 1 - shape.carried;
  if (node.outputs.size() != shape.carried + shape.scans) {
    return ctx.Error("has ", node.outputs.size(), " outputs; its body gives ", shape.carried,
                     " loop-carried values and ", shape.scans, " scan outputs");
  }
  if (node.inputs.size() < 2 + shape.carried) {
    return ctx.Error("has ", node.inputs.size(), " inputs for ", shape.carried,
                     " loop-carried values");
  }
  for (size_t i = 0; i < shape.carried; ++i) {
    if (!ctx.has_input(2 + i)) return ctx.Error("loop-carried value ", i, " has no initial value");
  }
  return shape;
}

class LoopKernel final : public OpKernel {
 public:
  absl::Status Run(const RunContext& ctx) override {
    int64_t trip = std::numeric_limits<int64_t>::max();
    if (has_trip_) trip = std::max<int64_t>(*ctx.in<int64_t>(0), 0);
    bool cond = !has_cond_ || *ctx.in<uint8_t>(1) != 0;
    if (cond && never_stops_early_ && trip > kMaxLoopIterations) {
      return absl::ResourceExhaustedError(StrCat("trip count ", trip, " exceeds the limit of ",
                                                 kMaxLoopIterations, " iterations per request"));
    }
    std::byte* const scratch = ctx.scratch;
    int64_t* const iteration = reinterpret_cast<int64_t*>(scratch + iteration_offset_);
    const std::byte* const cond_out = scratch + cond_offset_;
    for (size_t i = 0; i < carried_.size(); ++i) current_[i] = ctx.inputs[2 + i];
    const size_t formal = 2 + carried_.size();
    for (size_t j = 0; j < captures_.size(); ++j) {
      body_inputs_[formal + j] = ctx.inputs[static_cast<size_t>(captures_[j])];
    }
    body_inputs_[0] = scratch + iteration_offset_;
    body_inputs_[1] = true_.data();
    body_outputs_[0] = scratch + cond_offset_;
    int64_t k = 0;
    for (; k < trip && cond; ++k) {
      if (k == kMaxLoopIterations) {
        return absl::ResourceExhaustedError(StrCat("ran ", kMaxLoopIterations,
                                                   " iterations (the limit per request) without "
                                                   "its condition turning false"));
      }
      const size_t p = plans_.size() == 1 ? 0 : static_cast<size_t>(k);
      if (p >= plans_.size()) {
        return absl::InternalError(StrCat("iteration ", k, " has no body plan"));
      }
      *iteration = k;
      for (size_t i = 0; i < carried_.size(); ++i) {
        body_inputs_[2 + i] = current_[i];
        body_outputs_[1 + i] = scratch + (k % 2 == 0 ? carried_[i].a : carried_[i].b);
      }
      for (size_t j = 0; j < scans_.size(); ++j) {
        std::byte* out = ctx.outputs[carried_.size() + j];
        body_outputs_[1 + carried_.size() + j] =
            out != nullptr ? out + static_cast<size_t>(k) * scans_[j].bytes
                           : scratch + scans_[j].dropped_offset;
      }
      BRIGADE_RETURN_IF_ERROR(
          plans_[p]->RunOnBuffers(body_inputs_, body_outputs_, scratch, *ctx.stream, ctx.threads));
      for (size_t i = 0; i < carried_.size(); ++i) current_[i] = body_outputs_[1 + i];
      cond = *reinterpret_cast<const uint8_t*>(cond_out) != 0;
    }
    if (k != expected_iterations_ && expected_iterations_ >= 0) {
      return absl::InternalError(
          StrCat("ran ", k, " iterations; its plan expected ", expected_iterations_));
    }
    for (size_t i = 0; i < carried_.size(); ++i) {
      if (ctx.outputs[i] != nullptr && carried_[i].bytes > 0 && ctx.outputs[i] != current_[i]) {
        std::memcpy(ctx.outputs[i], current_[i], carried_[i].bytes);
      }
    }
    return absl::OkStatus();
  }

  struct ScanOutput {
    size_t bytes = 0;           // one iteration's slice
    size_t dropped_offset = 0;  // scratch slice when the node omits the output
  };

  bool has_trip_ = false;
  bool has_cond_ = false;
  // The body's condition is known true at plan time: only the trip count ends the loop.
  bool never_stops_early_ = false;
  // The iteration count the plan sized scan outputs for; -1 when there are none.
  int64_t expected_iterations_ = -1;
  Tensor true_;  // the body's condition input
  // One plan, or one per iteration when the body's shapes depend on the iteration number.
  std::vector<std::unique_ptr<ExecutionPlan>> plans_;
  std::vector<Tensor> iterations_;  // known iteration numbers of per-iteration plans
  std::vector<int> captures_;
  std::vector<CarriedBuffers> carried_;
  std::vector<ScanOutput> scans_;
  size_t iteration_offset_ = 0;
  size_t cond_offset_ = 0;
  // Reused by Run.
  std::vector<const std::byte*> current_;
  std::vector<const std::byte*> body_inputs_;
  std::vector<std::byte*> body_outputs_;
};

absl::StatusOr<std::unique_ptr<OpKernel>> CreateLoop(KernelContext& ctx) {
  const Node& node = *ctx.node;
  const Attribute* body = node.attributes.GetGraph("body");
  if (body == nullptr) return ctx.Error("needs a subgraph 'body'");
  BRIGADE_RETURN_IF_ERROR(CheckCaptures(ctx, *body, "body"));
  BRIGADE_ASSIGN_OR_RETURN(const LoopShape shape, ShapeOfLoop(ctx, *body));
  const Graph& graph = *body->g;
  auto kernel = std::make_unique<LoopKernel>();

  std::optional<int64_t> trip;  // known at plan time
  kernel->has_trip_ = ctx.has_input(0);
  if (kernel->has_trip_) {
    BRIGADE_RETURN_IF_ERROR(CheckScalar(ctx, 0, DataType::kInt64, "the trip count M"));
    if (const Tensor* m = ctx.input(0).constant; m != nullptr) {
      trip = std::max<int64_t>(m->values<int64_t>()[0], 0);
    }
  }
  std::optional<bool> cond;  // the entry condition, known at plan time
  kernel->has_cond_ = ctx.has_input(1);
  if (kernel->has_cond_) {
    BRIGADE_RETURN_IF_ERROR(CheckScalar(ctx, 1, DataType::kBool, "the condition"));
    if (const Tensor* c = ctx.input(1).constant; c != nullptr) cond = c->values<bool>()[0];
  } else {
    cond = true;
  }

  // The body's inputs. Its condition input is true whenever it runs (the loop stops on false),
  // so it is planned as a known true: what is computed from it folds away.
  const bool value = true;
  BRIGADE_ASSIGN_OR_RETURN(
      kernel->true_,
      Tensor::FromValues<bool>(ScalarShape(graph, 1), std::span<const bool>(&value, 1)));
  std::vector<ValueInfo> inputs(2);
  inputs[0].dtype = DataType::kInt64;
  inputs[0].shape = ScalarShape(graph, 0);
  inputs[1].dtype = DataType::kBool;
  inputs[1].shape = kernel->true_.shape();
  inputs[1].constant = &kernel->true_;
  for (size_t i = 0; i < shape.carried; ++i) {
    ValueInfo info = ctx.input(2 + i);
    info.constant = nullptr;  // it changes from one iteration to the next
    info.layout = Layout{};
    inputs.push_back(std::move(info));
  }
  AppendCaptured(ctx, *body, &inputs);

  // One plan, or one per iteration when the iteration number decides shapes in the body.
  size_t plan_count = 1;
  const bool per_iteration = ShapeDecidingInputs(graph)[0];
  if (per_iteration) {
    if (!trip.has_value()) {
      return ctx.Unsupported(
          "the body's shapes depend on the iteration number, so the trip count must be known at "
          "plan time (a constant, computed from shapes, or a graph input)");
    }
    if (*trip > kMaxUnrolledPlans) {
      return ctx.Unsupported(
          "the body's shapes depend on the iteration number, which needs one "
          "plan per iteration; ",
          *trip, " iterations exceed the limit of ", kMaxUnrolledPlans);
    }
    // Plans per iteration would multiply what nested control flow plans: keep them flat.
    for (const Node& inner : graph.nodes()) {
      if (!Subgraphs(inner).empty()) {
        return ctx.Unsupported(
            "the body's shapes depend on the iteration number, which needs one plan per "
            "iteration, and it holds control flow itself (node '",
            inner.name, "')");
      }
    }
    plan_count = static_cast<size_t>(std::max<int64_t>(*trip, 1));
    kernel->iterations_.reserve(plan_count);  // ValueInfo::constant points into it
  }
  bool cond_always_true = true;
  std::optional<bool> first_cond_out;
  std::vector<ValueInfo> outputs;
  size_t arena_bytes = 0;
  for (size_t p = 0; p < plan_count; ++p) {
    if (per_iteration) {
      const int64_t number = static_cast<int64_t>(p);
      BRIGADE_ASSIGN_OR_RETURN(
          Tensor t,
          Tensor::FromValues<int64_t>(inputs[0].shape, std::span<const int64_t>(&number, 1)));
      kernel->iterations_.push_back(std::move(t));
      inputs[0].constant = &kernel->iterations_.back();
    }
    const std::string what = per_iteration ? StrCat("body (iteration ", p, ")") : "body";
    BRIGADE_ASSIGN_OR_RETURN(SubgraphPlan planned, PlanNamedSubgraph(ctx, *body, inputs, what));
    const ValueInfo& cond_out = planned.outputs[0];
    if (cond_out.dtype != DataType::kBool || cond_out.num_elements() != 1) {
      return ctx.Error(what, " returns its condition as ", Describe(cond_out),
                       "; it must be one bool");
    }
    const bool known_true = cond_out.constant != nullptr && cond_out.constant->values<bool>()[0];
    cond_always_true = cond_always_true && known_true;
    if (p == 0 && cond_out.constant != nullptr) first_cond_out = known_true;
    for (size_t i = 0; i < shape.carried; ++i) {
      const ValueInfo& in = inputs[2 + i];
      const ValueInfo& out = planned.outputs[1 + i];
      if (in.dtype != out.dtype || in.shape != out.shape) {
        return ctx.Unsupported(
            "loop-carried value ", i, " ('", graph.value(graph.inputs()[2 + i]).name, "') is ",
            Describe(in), " on entry but ", what, " returns ", Describe(out),
            "; Brigade plans one shape per value, so it must stay fixed across iterations");
      }
    }
    if (p == 0) {
      outputs = planned.outputs;
    } else {
      for (size_t j = 0; j < shape.scans; ++j) {
        const ValueInfo& a = outputs[1 + shape.carried + j];
        const ValueInfo& b = planned.outputs[1 + shape.carried + j];
        if (a.dtype != b.dtype || a.shape != b.shape) {
          return ctx.Unsupported("scan output ", j, " is ", Describe(a), " in iteration 0 but ",
                                 Describe(b), " in iteration ", p,
                                 "; its slices must have one shape");
        }
      }
    }
    arena_bytes = std::max(arena_bytes, planned.plan->arena_bytes);
    kernel->plans_.push_back(std::move(planned.plan));
  }
  kernel->never_stops_early_ = cond_always_true;

  // Scan outputs are sized by the iteration count, which must be known now.
  std::optional<int64_t> iterations;
  if (cond.has_value() && !*cond) {
    iterations = 0;
  } else if (cond.has_value() && cond_always_true && trip.has_value()) {
    iterations = *trip;
  } else if (cond.has_value() && first_cond_out.has_value() && !*first_cond_out) {
    iterations = trip.has_value() ? std::min<int64_t>(*trip, 1) : 1;
  }
  if (iterations.has_value() && *iterations > kMaxLoopIterations) {
    return absl::ResourceExhaustedError(StrCat("node '", node.name, "' (Loop): ", *iterations,
                                               " iterations exceed the limit of ",
                                               kMaxLoopIterations, " per request"));
  }
  if (shape.scans > 0 && !iterations.has_value()) {
    const char* why = !kernel->has_trip_  ? "it has no trip count"
                      : !trip.has_value() ? "its trip count is computed at run time"
                      : !cond.has_value() ? "its condition input is computed at run time"
                                          : "its body computes the condition at run time";
    return ctx.Unsupported(
        "scan outputs are sized by the number of iterations, which Brigade "
        "needs at plan time, but ",
        why);
  }
  if (shape.scans > 0) kernel->expected_iterations_ = *iterations;

  ScratchLayout scratch;
  scratch.Add(arena_bytes);
  kernel->iteration_offset_ = scratch.Add(sizeof(int64_t));
  kernel->cond_offset_ = scratch.Add(1);
  for (size_t i = 0; i < shape.carried; ++i) {
    const ValueInfo& in = inputs[2 + i];
    ctx.SetOutput(i, in.dtype, in.shape);
    CarriedBuffers carried;
    carried.bytes = in.byte_size();
    carried.a = scratch.Add(carried.bytes);
    carried.b = scratch.Add(carried.bytes);
    kernel->carried_.push_back(carried);
  }
  for (size_t j = 0; j < shape.scans; ++j) {
    const ValueInfo& slice = outputs[1 + shape.carried + j];
    Shape stacked{*iterations};
    stacked.insert(stacked.end(), slice.shape.begin(), slice.shape.end());
    BRIGADE_RETURN_IF_ERROR(CheckShapeSize(ctx, stacked));
    ctx.SetOutput(shape.carried + j, slice.dtype, std::move(stacked));
    LoopKernel::ScanOutput scan;
    scan.bytes = slice.byte_size();
    if (node.outputs[shape.carried + j] == kNoValue) scan.dropped_offset = scratch.Add(scan.bytes);
    kernel->scans_.push_back(scan);
  }
  ctx.scratch_bytes = scratch.bytes();
  if (ctx.shape_only) return std::unique_ptr<OpKernel>();
  kernel->captures_ = body->captures;
  kernel->current_.resize(shape.carried);
  kernel->body_inputs_.resize(graph.inputs().size());
  kernel->body_outputs_.resize(graph.outputs().size());
  return kernel;
}

std::vector<bool> LoopValueInputs(const Node& node) {
  std::vector<bool> needed = CapturedValueInputs(node);
  const Attribute* body = node.attributes.GetGraph("body");
  if (body == nullptr || needed.size() < 2) return needed;
  const size_t formal = FormalInputs(*body);
  if (formal < 2) return needed;
  const size_t carried = formal - 2;
  if (body->g->outputs().size() > 1 + carried) {
    // Scan outputs are sized by the iteration count: the trip count and the entry condition
    // decide a shape (a graph input feeding them joins the plan key).
    needed[0] = needed[1] = true;
  } else if (ShapeDecidingInputs(*body->g)[0]) {
    needed[0] = true;  // one plan per iteration needs the trip count
  }
  return needed;
}

}  // namespace

void RegisterControlFlowKernels(KernelRegistry* registry) {
  // Every opset (Scan: subgraph_scan.cc): before 11 they compute the same for tensors, and opset 16
  // only adds optional types, which the engine does not have. Never evaluated ahead of time
  // (constant folding, plan-time evaluation): a loop's cost is not bounded by its outputs' size,
  // which is what those budgets measure, and a hostile model could make loading run it 2^20 times.
  KernelDef def;
  def.foldable = false;
  def.op_type = "If";
  def.create = CreateIf;
  def.value_inputs_of = IfValueInputs;
  registry->Add(def);
  def.op_type = "Loop";
  def.create = CreateLoop;
  def.value_inputs_of = LoopValueInputs;
  registry->Add(def);
}

}  // namespace brigade::engine::onnx
