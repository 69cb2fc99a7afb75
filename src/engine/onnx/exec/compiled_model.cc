#include "engine/onnx/exec/compiled_model.h"

#include <algorithm>

#include "core/strings.h"
#include "engine/onnx/exec/batch_split.h"
#include "engine/onnx/kernels/cpu_isa.h"
#include "engine/onnx/kernels/registry.h"

namespace brigade::engine::onnx {

std::optional<ComputePrecision> ParsePrecision(std::string_view name) {
  if (name == "fp32") return ComputePrecision::kFp32;
  if (name == "bf16") return ComputePrecision::kBf16;
  return std::nullopt;
}

absl::StatusOr<std::shared_ptr<CompiledModel>> CompiledModel::Compile(std::string name, Graph graph,
                                                                      Options options) {
  auto model = std::make_shared<CompiledModel>(Token{});
  model->name_ = std::move(name);
  model->precision_ = options.precision;
  if (options.precision == ComputePrecision::kBf16 && !CpuMultipliesBf16()) {
    // oneDNN would emulate bf16 here, slower than fp32 and less accurate: keep fp32, say so.
    model->precision_ = ComputePrecision::kFp32;
    model->precision_note_ =
        StrCat("bf16 asked for, fp32 used: oneDNN's ISA on this CPU is ", DnnlCpuIsaName(),
               ", without native bf16 (AVX-512 BF16 or AMX)");
  }
  try {
    model->engine_ = dnnl::engine(dnnl::engine::kind::cpu, 0);
  } catch (const dnnl::error& e) {
    return absl::InternalError(StrCat("oneDNN CPU engine: ", e.what()));
  }
  model->weights_ = std::make_unique<PackedWeights>();

  model->use_counts_ = CountUses(graph);
  model->shape_inputs_ = ShapeDecidingInputs(graph);
  model->rows_independent_ = RowsAreIndependent(graph);
  model->releasable_ = ReleasableConstants(graph);
  model->released_keys_.resize(graph.num_values());
  model->graph_ = std::move(graph);
  return model;
}

void CompiledModel::ReleaseIfPacked(ValueId id) {
  const auto index = static_cast<size_t>(id);
  if (index >= releasable_.size() || !releasable_[index] || !released_keys_[index].empty()) return;
  Value& value = graph_.value(id);
  const Tensor& data = *value.constant;
  std::vector<std::string> keys = weights_->KeysPackedFrom(data.data(), data.byte_size());
  if (keys.empty() || keys.size() < static_cast<size_t>(use_counts_[index])) return;
  // Same type and shape, no bytes: the planner describes the value from it, and a null data
  // pointer is what tells PackConstant and the planner to rebuild the source.
  absl::StatusOr<Tensor> placeholder =
      Tensor::View(data.dtype(), data.shape(), nullptr, data.byte_size(), nullptr);
  if (!placeholder.ok()) return;
  released_bytes_ += data.byte_size();
  released_keys_[index] = std::move(keys.front());
  value.constant = *std::move(placeholder);
}

std::vector<bool> ReleasableConstants(const Graph& graph) {
  std::vector<bool> releasable(graph.num_values(), false);
  // Below a page the bookkeeping costs more than the bytes.
  constexpr size_t kMinReleaseBytes = 4096;
  struct Range {
    const std::byte* begin;
    const std::byte* end;
    size_t id;
  };
  std::vector<Range> ranges;
  for (size_t id = 0; id < graph.num_values(); ++id) {
    const Value& value = graph.value(static_cast<ValueId>(id));
    if (!value.is_constant() || value.constant->byte_size() == 0) continue;
    const std::byte* begin = value.constant->data();
    ranges.push_back({begin, begin + value.constant->byte_size(), id});
    releasable[id] = value.constant->dtype() == DataType::kFp32 &&
                     value.constant->byte_size() >= kMinReleaseBytes;
  }
  // Constants sharing bytes (views of one another) would count each other's packed copies.
  std::sort(ranges.begin(), ranges.end(),
            [](const Range& a, const Range& b) { return a.begin < b.begin; });
  for (size_t i = 1; i < ranges.size(); ++i) {
    if (ranges[i].begin < ranges[i - 1].end) {
      releasable[ranges[i].id] = false;
      releasable[ranges[i - 1].id] = false;
    }
  }
  for (ValueId id : graph.inputs()) releasable[static_cast<size_t>(id)] = false;
  for (ValueId id : graph.outputs()) releasable[static_cast<size_t>(id)] = false;
  // A subgraph reads captured values through its own plan, which does not rebuild them.
  for (const Node& node : graph.nodes()) {
    if (Subgraphs(node).empty()) continue;
    for (ValueId id : node.inputs) {
      if (id != kNoValue) releasable[static_cast<size_t>(id)] = false;
    }
  }
  return releasable;
}

std::vector<int> CountUses(const Graph& graph) {
  std::vector<int> counts(graph.num_values(), 0);
  for (const Node& node : graph.nodes()) {
    for (ValueId input : node.inputs) {
      if (input != kNoValue) ++counts[static_cast<size_t>(input)];
    }
  }
  for (ValueId output : graph.outputs()) ++counts[static_cast<size_t>(output)];
  return counts;
}

std::vector<bool> ShapeDecidingInputs(const Graph& graph) {
  // Walk backwards from every input position whose contents decide a shape: anything feeding it
  // must be known at plan time, and graph inputs reached that way join the plan key.
  const KernelRegistry& registry = KernelRegistry::Get();
  std::vector<bool> needed(graph.num_values(), false);
  const auto& nodes = graph.nodes();
  for (size_t i = nodes.size(); i-- > 0;) {
    const Node& node = nodes[i];
    const KernelDef* def = registry.Find(node.domain, node.op_type, node.opset);
    if (def == nullptr) continue;
    bool outputs_needed = false;
    for (ValueId output : node.outputs) {
      if (output != kNoValue && needed[static_cast<size_t>(output)]) outputs_needed = true;
    }
    const std::vector<bool> value_inputs = def->ValueInputs(node);
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      const ValueId input = node.inputs[k];
      if (input == kNoValue) continue;
      if ((k < value_inputs.size() && value_inputs[k]) ||
          (outputs_needed && def->reads_input_data)) {
        needed[static_cast<size_t>(input)] = true;
      }
    }
  }
  std::vector<bool> inputs;
  for (ValueId input : graph.inputs()) inputs.push_back(needed[static_cast<size_t>(input)]);
  return inputs;
}

}  // namespace brigade::engine::onnx
