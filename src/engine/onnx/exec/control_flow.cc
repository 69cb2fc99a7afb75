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
#include "engine/onnx/kernels/kernel_util.h"
#include "engine/onnx/kernels/registry.h"

namespace brigade::engine::onnx {
namespace {

constexpr size_t kScratchAlignment = 64;

size_t AlignToScratch(size_t bytes) {
  return (bytes + kScratchAlignment - 1) / kScratchAlignment * kScratchAlignment;
}

std::string Describe(const ValueInfo& info) {
  return StrCat(DataTypeName(info.dtype), " ", ShapeToString(info.shape));
}

// Carves the node's scratch into aligned pieces at plan time; Run() adds the offsets to
// RunContext::scratch.
class ScratchLayout {
 public:
  size_t Add(size_t bytes) {
    const size_t offset = bytes_;
    bytes_ += AlignToScratch(bytes);
    return offset;
  }
  size_t bytes() const { return bytes_; }

 private:
  size_t bytes_ = 0;
};

// The subgraph's formal inputs: those before its captured ones (attribute.h).
size_t FormalInputs(const Attribute& subgraph) {
  return subgraph.g->inputs().size() -
         std::min(subgraph.g->inputs().size(), subgraph.captures.size());
}

absl::Status CheckCaptures(const KernelContext& ctx, const Attribute& subgraph,
                           std::string_view what) {
  if (subgraph.captures.size() > subgraph.g->inputs().size()) {
    return ctx.Error(what, " captures more values than it has inputs");
  }
  for (int index : subgraph.captures) {
    if (index < 0 || !ctx.has_input(static_cast<size_t>(index))) {
      return ctx.Error(what, ": captured value (node input ", index, ") is missing");
    }
  }
  return absl::OkStatus();
}

// Appends the descriptions of `subgraph`'s captured inputs: the node's inputs they come from,
// known at plan time when the enclosing plan knows them.
void AppendCaptured(const KernelContext& ctx, const Attribute& subgraph,
                    std::vector<ValueInfo>* infos) {
  for (int index : subgraph.captures) {
    ValueInfo info = ctx.input(static_cast<size_t>(index));
    info.layout = Layout{};  // control-flow nodes take plain inputs only (no blocked_inputs)
    infos->push_back(std::move(info));
  }
}

absl::StatusOr<SubgraphPlan> PlanNamedSubgraph(const KernelContext& ctx, const Attribute& subgraph,
                                               std::span<const ValueInfo> inputs,
                                               std::string_view what) {
  auto planned = PlanSubgraph(*subgraph.g, inputs, ctx);
  if (!planned.ok()) {
    return absl::Status(planned.status().code(),
                        StrCat("node '", ctx.node->name, "' (", ctx.node->op_type, "): ", what,
                               ": ", planned.status().message()));
  }
  return planned;
}

// Per node input: whether it is a captured value one of the node's subgraphs needs at plan
// time. Each subgraph is analysed once (ShapeDecidingInputs), whatever it captures, so nested
// subgraphs cost their size, not a product of capture counts.
std::vector<bool> CapturedValueInputs(const Node& node) {
  std::vector<bool> needed(node.inputs.size(), false);
  for (const Attribute* subgraph : Subgraphs(node)) {
    if (subgraph->captures.empty()) continue;
    const size_t formal = FormalInputs(*subgraph);
    const std::vector<bool> deciding = ShapeDecidingInputs(*subgraph->g);
    for (size_t j = 0; j < subgraph->captures.size(); ++j) {
      const size_t input = static_cast<size_t>(subgraph->captures[j]);
      if (input < needed.size() && formal + j < deciding.size() && deciding[formal + j]) {
        needed[input] = true;
      }
    }
  }
  return needed;
}

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

  struct Carried {
    size_t bytes = 0;
    size_t a = 0, b = 0;  // scratch offsets of the two buffers iterations alternate between
  };
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
  std::vector<Carried> carried_;
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
    LoopKernel::Carried carried;
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

// ---------------------------------------------------------------------------------------------
// Scan

// Copies slice `position` along `axis` of a tensor of `shape` (elements of `element` bytes)
// between the tensor and a contiguous slice buffer.
struct SliceCopy {
  size_t outer = 1;        // product of the dims before the axis
  size_t length = 0;       // the axis' dim
  size_t inner_bytes = 0;  // bytes of the dims after it

  void Gather(const std::byte* tensor, size_t position, std::byte* slice) const {
    for (size_t o = 0; o < outer; ++o) {
      std::memcpy(slice + o * inner_bytes, tensor + (o * length + position) * inner_bytes,
                  inner_bytes);
    }
  }
  void Scatter(const std::byte* slice, size_t position, std::byte* tensor) const {
    for (size_t o = 0; o < outer; ++o) {
      std::memcpy(tensor + (o * length + position) * inner_bytes, slice + o * inner_bytes,
                  inner_bytes);
    }
  }
};

SliceCopy MakeSliceCopy(const Shape& shape, size_t axis, DataType dtype) {
  SliceCopy copy;
  copy.outer = static_cast<size_t>(DimProduct(shape, 0, axis));
  copy.length = static_cast<size_t>(shape[axis]);
  copy.inner_bytes =
      static_cast<size_t>(DimProduct(shape, axis + 1, shape.size())) * DataTypeSize(dtype);
  return copy;
}

class ScanKernel final : public OpKernel {
 public:
  struct Sequence {
    SliceCopy copy;
    bool in_place = false;  // axis 0: slices are contiguous
    bool reverse = false;
    size_t slice_bytes = 0;
    size_t buffer = 0;        // scratch offset of the slice buffer when not in place
    size_t batch_stride = 0;  // Scan-8: bytes of one batch row of the tensor
  };

  absl::Status Run(const RunContext& ctx) override {
    if (has_lengths_) BRIGADE_RETURN_IF_ERROR(CheckLengths(ctx.in<int64_t>(0)));
    for (size_t row = 0; row < batch_; ++row) BRIGADE_RETURN_IF_ERROR(RunRow(ctx, row));
    return absl::OkStatus();
  }

  // Scan-8 runs whole sequences only: its sequence_lens must all be the sequence length.
  absl::Status CheckLengths(const int64_t* lengths) const {
    for (size_t row = 0; row < batch_; ++row) {
      if (lengths[row] != static_cast<int64_t>(length_)) {
        return absl::UnimplementedError(StrCat("sequence_lens[", row, "] is ", lengths[row],
                                               "; Brigade runs whole sequences (", length_,
                                               " steps) only"));
      }
    }
    return absl::OkStatus();
  }

  // One batch row (Scan-8; Scan-9+ has one).
  absl::Status RunRow(const RunContext& ctx, size_t row) {
    std::byte* const scratch = ctx.scratch;
    const size_t n = carried_.size();
    for (size_t i = 0; i < n; ++i) {
      current_[i] = ctx.inputs[first_input_ + i] + row * carried_[i].bytes;
    }
    const size_t formal = n + inputs_.size();
    for (size_t j = 0; j < captures_.size(); ++j) {
      body_inputs_[formal + j] = ctx.inputs[static_cast<size_t>(captures_[j])];
    }
    for (size_t t = 0; t < length_; ++t) {
      for (size_t i = 0; i < n; ++i) {
        body_inputs_[i] = current_[i];
        body_outputs_[i] = scratch + (t % 2 == 0 ? carried_[i].a : carried_[i].b);
      }
      for (size_t s = 0; s < inputs_.size(); ++s) {
        const Sequence& in = inputs_[s];
        const size_t position = in.reverse ? length_ - 1 - t : t;
        const std::byte* tensor = ctx.inputs[first_input_ + n + s] + row * in.batch_stride;
        if (in.in_place) {
          body_inputs_[n + s] = tensor + position * in.slice_bytes;
        } else {
          in.copy.Gather(tensor, position, scratch + in.buffer);
          body_inputs_[n + s] = scratch + in.buffer;
        }
      }
      for (size_t s = 0; s < outputs_.size(); ++s) {
        const Sequence& out = outputs_[s];
        const size_t position = out.reverse ? length_ - 1 - t : t;
        std::byte* tensor = ctx.outputs[n + s];
        body_outputs_[n + s] = out.in_place && tensor != nullptr
                                   ? tensor + row * out.batch_stride + position * out.slice_bytes
                                   : scratch + out.buffer;
      }
      BRIGADE_RETURN_IF_ERROR(
          plan_->RunOnBuffers(body_inputs_, body_outputs_, scratch, *ctx.stream, ctx.threads));
      for (size_t s = 0; s < outputs_.size(); ++s) {
        const Sequence& out = outputs_[s];
        std::byte* tensor = ctx.outputs[n + s];
        if (out.in_place || tensor == nullptr) continue;
        out.copy.Scatter(scratch + out.buffer, out.reverse ? length_ - 1 - t : t,
                         tensor + row * out.batch_stride);
      }
      for (size_t i = 0; i < n; ++i) current_[i] = body_outputs_[i];
    }
    for (size_t i = 0; i < n; ++i) {
      std::byte* out = ctx.outputs[i];
      if (out != nullptr && carried_[i].bytes > 0) {
        std::memcpy(out + row * carried_[i].bytes, current_[i], carried_[i].bytes);
      }
    }
    return absl::OkStatus();
  }

  std::unique_ptr<ExecutionPlan> plan_;
  size_t length_ = 0;
  size_t batch_ = 1;        // Scan-8's batch rows; 1 from opset 9
  size_t first_input_ = 0;  // 1 in Scan-8, whose input 0 is sequence_lens
  bool has_lengths_ = false;
  std::vector<LoopKernel::Carried> carried_;
  std::vector<Sequence> inputs_;
  std::vector<Sequence> outputs_;
  std::vector<int> captures_;
  // Reused by Run.
  std::vector<const std::byte*> current_;
  std::vector<const std::byte*> body_inputs_;
  std::vector<std::byte*> body_outputs_;
};

// Scan-9+ and Scan-8. Scan-8 has a leading batch axis on every state and sequence (the body
// sees one row at a time; sequences run along axis 1) and an optional sequence_lens input first.
absl::StatusOr<std::unique_ptr<OpKernel>> CreateScan(KernelContext& ctx) {
  const Node& node = *ctx.node;
  const Attribute* body = node.attributes.GetGraph("body");
  if (body == nullptr) return ctx.Error("needs a subgraph 'body'");
  BRIGADE_RETURN_IF_ERROR(CheckCaptures(ctx, *body, "body"));
  const Graph& graph = *body->g;
  const bool batched = node.opset < 9;
  const size_t first = batched ? 1 : 0;
  const size_t formal = FormalInputs(*body);
  const int64_t m = node.attributes.GetInt("num_scan_inputs", 0);
  if (m < 1 || static_cast<size_t>(m) > formal) {
    return ctx.Error("num_scan_inputs ", m, " must be between 1 and the body's ", formal,
                     " inputs");
  }
  const size_t scan_inputs = static_cast<size_t>(m);
  const size_t carried = formal - scan_inputs;
  if (graph.outputs().size() < carried || node.outputs.size() != graph.outputs().size()) {
    return ctx.Error("has ", node.outputs.size(), " outputs; its body has ", graph.outputs().size(),
                     " for ", carried, " state values");
  }
  if (node.inputs.size() < first + formal) {
    return ctx.Error("has ", node.inputs.size(), " inputs; its body needs ", formal);
  }
  const size_t scan_outputs = graph.outputs().size() - carried;
  auto attribute_list = [&](std::string_view name,
                            size_t count) -> absl::StatusOr<std::vector<int64_t>> {
    const auto values = node.attributes.GetInts(name);
    if (values.empty()) return std::vector<int64_t>(count, 0);
    if (values.size() != count) {
      return ctx.Error(name, " has ", values.size(), " entries for ", count, " sequences");
    }
    return std::vector<int64_t>(values.begin(), values.end());
  };
  BRIGADE_ASSIGN_OR_RETURN(
      auto input_directions,
      attribute_list(batched ? "directions" : "scan_input_directions", scan_inputs));
  std::vector<int64_t> input_axes(scan_inputs, 0), output_axes(scan_outputs, 0);
  std::vector<int64_t> output_directions(scan_outputs, 0);
  if (!batched) {
    BRIGADE_ASSIGN_OR_RETURN(input_axes, attribute_list("scan_input_axes", scan_inputs));
    BRIGADE_ASSIGN_OR_RETURN(output_directions,
                             attribute_list("scan_output_directions", scan_outputs));
    BRIGADE_ASSIGN_OR_RETURN(output_axes, attribute_list("scan_output_axes", scan_outputs));
  }

  auto kernel = std::make_unique<ScanKernel>();
  kernel->first_input_ = first;
  // What the body sees of a node input: Scan-8 drops the batch axis, which all must share.
  std::optional<int64_t> batch;
  auto row_of = [&](size_t input) -> absl::StatusOr<ValueInfo> {
    ValueInfo info = ctx.input(input);
    info.constant = nullptr;
    info.layout = Layout{};
    if (!batched) return info;
    if (info.shape.empty()) return ctx.Error("input ", input, " has no batch axis");
    if (batch.has_value() && *batch != info.shape[0]) {
      return ctx.Error("input ", input, " has ", info.shape[0], " batch rows, input ", first, " ",
                       *batch);
    }
    batch = info.shape[0];
    info.shape.erase(info.shape.begin());
    return info;
  };
  std::vector<ValueInfo> inputs;
  for (size_t i = 0; i < carried; ++i) {
    if (!ctx.has_input(first + i)) return ctx.Error("state value ", i, " has no initial value");
    BRIGADE_ASSIGN_OR_RETURN(ValueInfo info, row_of(first + i));
    inputs.push_back(std::move(info));
  }
  std::optional<int64_t> length;
  for (size_t s = 0; s < scan_inputs; ++s) {
    if (!ctx.has_input(first + carried + s)) return ctx.Error("scan input ", s, " is missing");
    BRIGADE_ASSIGN_OR_RETURN(const ValueInfo in, row_of(first + carried + s));
    const int64_t rank = static_cast<int64_t>(in.shape.size());
    if (rank < 1) return ctx.Error("scan input ", s, " is a scalar; it needs a sequence axis");
    BRIGADE_ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(ctx, input_axes[s], rank));
    const int64_t len = in.shape[static_cast<size_t>(axis)];
    if (length.has_value() && *length != len) {
      return ctx.Error("scan input ", s, " has ", len, " steps, scan input 0 ", *length);
    }
    length = len;
    ValueInfo slice;
    slice.dtype = in.dtype;
    slice.shape = in.shape;
    slice.shape.erase(slice.shape.begin() + axis);
    ScanKernel::Sequence sequence;
    sequence.copy = MakeSliceCopy(in.shape, static_cast<size_t>(axis), in.dtype);
    sequence.in_place = axis == 0;
    sequence.reverse = input_directions[s] != 0;
    sequence.slice_bytes = slice.byte_size();
    sequence.batch_stride = in.byte_size();
    kernel->inputs_.push_back(sequence);
    inputs.push_back(std::move(slice));
  }
  kernel->length_ = static_cast<size_t>(*length);
  kernel->batch_ = static_cast<size_t>(batch.value_or(1));
  if (batched && ctx.has_input(0)) {
    const ValueInfo& lengths = ctx.input(0);
    if (lengths.dtype != DataType::kInt64 || lengths.shape != Shape{batch.value_or(1)}) {
      return ctx.Error("sequence_lens must be int64 [", batch.value_or(1), "], got ",
                       Describe(lengths));
    }
    if (lengths.constant != nullptr) {
      absl::Status whole = kernel->CheckLengths(lengths.constant->values<int64_t>().data());
      if (!whole.ok()) return ctx.Unsupported(whole.message());
    } else {
      kernel->has_lengths_ = true;
    }
  }
  AppendCaptured(ctx, *body, &inputs);
  BRIGADE_ASSIGN_OR_RETURN(SubgraphPlan planned, PlanNamedSubgraph(ctx, *body, inputs, "body"));
  for (size_t i = 0; i < carried; ++i) {
    const ValueInfo& in = inputs[i];
    const ValueInfo& out = planned.outputs[i];
    if (in.dtype != out.dtype || in.shape != out.shape) {
      return ctx.Unsupported("state value ", i, " ('", graph.value(graph.inputs()[i]).name,
                             "') is ", Describe(in), " on entry but the body returns ",
                             Describe(out),
                             "; Brigade plans one shape per value, so it must stay fixed");
    }
  }
  auto batched_shape = [&](Shape shape) {
    if (batched) shape.insert(shape.begin(), batch.value_or(1));
    return shape;
  };
  ScratchLayout scratch;
  scratch.Add(planned.plan->arena_bytes);
  for (size_t i = 0; i < carried; ++i) {
    ctx.SetOutput(i, inputs[i].dtype, batched_shape(inputs[i].shape));
    LoopKernel::Carried state;
    state.bytes = inputs[i].byte_size();
    state.a = scratch.Add(state.bytes);
    state.b = scratch.Add(state.bytes);
    kernel->carried_.push_back(state);
  }
  for (ScanKernel::Sequence& in : kernel->inputs_) {
    if (!in.in_place) in.buffer = scratch.Add(in.slice_bytes);
  }
  for (size_t s = 0; s < scan_outputs; ++s) {
    const ValueInfo& slice = planned.outputs[carried + s];
    const int64_t rank = static_cast<int64_t>(slice.shape.size()) + 1;
    BRIGADE_ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(ctx, output_axes[s], rank));
    Shape stacked = slice.shape;
    stacked.insert(stacked.begin() + axis, *length);
    BRIGADE_RETURN_IF_ERROR(CheckShapeSize(ctx, batched_shape(stacked)));
    ScanKernel::Sequence sequence;
    sequence.copy = MakeSliceCopy(stacked, static_cast<size_t>(axis), slice.dtype);
    sequence.in_place = axis == 0 && node.outputs[carried + s] != kNoValue;
    sequence.reverse = output_directions[s] != 0;
    sequence.slice_bytes = slice.byte_size();
    sequence.batch_stride = sequence.slice_bytes * static_cast<size_t>(*length);
    if (!sequence.in_place) sequence.buffer = scratch.Add(sequence.slice_bytes);
    kernel->outputs_.push_back(sequence);
    ctx.SetOutput(carried + s, slice.dtype, batched_shape(std::move(stacked)));
  }
  ctx.scratch_bytes = scratch.bytes();
  if (ctx.shape_only) return std::unique_ptr<OpKernel>();
  kernel->plan_ = std::move(planned.plan);
  kernel->captures_ = body->captures;
  kernel->current_.resize(carried);
  kernel->body_inputs_.resize(graph.inputs().size());
  kernel->body_outputs_.resize(graph.outputs().size());
  return kernel;
}

std::vector<bool> ScanValueInputs(const Node& node) { return CapturedValueInputs(node); }

}  // namespace

void RegisterControlFlowKernels(KernelRegistry* registry) {
  // Every opset: before 11 they compute the same for tensors, and opset 16 only adds optional
  // types, which the engine does not have. Never evaluated ahead of time (constant folding,
  // plan-time evaluation): a loop's cost is not bounded by its outputs' size, which is what
  // those budgets measure, and a hostile model could make loading run it 2^20 times.
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
  def.op_type = "Scan";
  def.since_version = 8;
  def.create = CreateScan;
  def.value_inputs_of = ScanValueInputs;
  registry->Add(def);
}

}  // namespace brigade::engine::onnx
