#include "engine/onnx/passes/constant_folding.h"

#include "engine/onnx/passes/pass_util.h"

namespace brigade::engine::onnx {

absl::StatusOr<bool> ConstantFolding::Run(Graph* graph) const {
  bool changed = false;
  for (Node& node : graph->nodes()) {
    if (node.removed || node.inputs.empty()) continue;
    bool all_constant = true;
    for (ValueId input : node.inputs) {
      if (input != kNoValue && ConstantOf(*graph, input) == nullptr) all_constant = false;
    }
    if (!all_constant) continue;
    auto results = EvaluateNode(*graph, node);
    if (!results.ok()) continue;  // not foldable here; it will run (and report) at run time
    size_t bytes = 0;
    for (const Tensor& t : *results) bytes += t.byte_size();
    if (bytes > kMaxFoldedBytes) continue;
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
