#include "engine/onnx/exec/compiled_model.h"

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
  model->graph_ = std::move(graph);
  return model;
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
