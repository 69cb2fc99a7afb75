// Scan (control_flow.h describes it with If and Loop): the body planned once per signature,
// run once per position of the scanned sequences.

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/status_macros.h"
#include "core/strings.h"
#include "engine/onnx/exec/compiled_model.h"
#include "engine/onnx/exec/control_flow.h"
#include "engine/onnx/exec/execution_plan.h"
#include "engine/onnx/exec/planner.h"
#include "engine/onnx/exec/subgraph_util.h"
#include "engine/onnx/kernels/kernel_util.h"
#include "engine/onnx/kernels/registry.h"

namespace brigade::engine::onnx {
namespace {

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
  std::vector<CarriedBuffers> carried_;
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
    CarriedBuffers state;
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

void RegisterScanKernel(KernelRegistry* registry) {
  // Never evaluated ahead of time, as If and Loop (control_flow.cc).
  KernelDef def;
  def.foldable = false;
  def.op_type = "Scan";
  def.since_version = 8;
  def.create = CreateScan;
  def.value_inputs_of = ScanValueInputs;
  registry->Add(def);
}

}  // namespace brigade::engine::onnx
