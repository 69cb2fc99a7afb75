#include "engine/onnx/passes/constant_folding.h"

#include "engine/onnx/passes/pass_util.h"

namespace brigade::engine::onnx {

absl::StatusOr<bool> ConstantFolding::Run(Graph* graph) const {
  bool changed = false;
  size_t budget = base_budget_bytes_;
  for (size_t i = 0; i < graph->num_values(); ++i) {
    const Value& v = graph->value(static_cast<ValueId>(i));
    if (v.constant.has_value()) budget += 2 * v.constant->byte_size();
  }
  for (Node& node : graph->nodes()) {
    if (node.removed || node.inputs.empty()) continue;
    bool all_constant = true;
    for (ValueId input : node.inputs) {
      if (input != kNoValue && ConstantOf(*graph, input) == nullptr) all_constant = false;
    }
    if (!all_constant) continue;
    // Not foldable here, or too big to hold: it runs (and reports) at run time.
    auto results = EvaluateNode(*graph, node, budget);
    if (!results.ok()) continue;
    for (const Tensor& t : *results) budget -= t.byte_size();
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      if (node.outputs[k] == kNoValue) continue;
      Value& out = graph->value(node.outputs[k]);
      out.dtype = (*results)[k].dtype();
      out.shape = (*results)[k].shape();
      out.constant = std::move((*results)[k]);
    }
    node.removed = true;
    changed = true;
  }
  graph->Compact();
  return changed;
}

}  // namespace brigade::engine::onnx
