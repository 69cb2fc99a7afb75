#include "engine/onnx/passes/dead_node_elimination.h"

#include <vector>

#include "engine/onnx/passes/pass_util.h"

namespace brigade::engine::onnx {
namespace {

// Whether `node` is a Pad whose pads are all known to be 0 (PyTorch's avg_pool2d export puts one
// before every AveragePool, DenseNet's transitions included): any mode then copies its input.
bool IsZeroPad(const Graph& graph, const Node& node) {
  if (!IsOp(node, "Pad") || node.inputs.empty() || node.outputs.size() != 1) return false;
  if (node.opset < 11) {
    for (int64_t p : node.attributes.GetInts("pads")) {
      if (p != 0) return false;
    }
    return true;
  }
  const Tensor* pads = node.has_input(1) ? ConstantOf(graph, node.inputs[1]) : nullptr;
  if (pads == nullptr || pads->dtype() != DataType::kInt64) return false;
  for (int64_t p : pads->values<int64_t>()) {
    if (p != 0) return false;
  }
  return true;
}

// Identity, a Pad of zeros, or a Dropout whose mask output is unused and which is not in
// training mode.
bool IsPassThrough(const Graph& graph, const Node& node) {
  if (IsOp(node, "Identity")) return node.inputs.size() == 1 && node.outputs.size() == 1;
  if (IsZeroPad(graph, node)) return true;
  if (!IsOp(node, "Dropout") || node.inputs.empty()) return false;
  if (node.outputs.size() > 1 && node.outputs[1] != kNoValue) return false;
  if (node.has_input(2)) {
    const Tensor* mode = ConstantOf(graph, node.inputs[2]);
    if (mode == nullptr || mode->dtype() != DataType::kBool || mode->values<bool>()[0]) {
      return false;
    }
  }
  return true;
}

}  // namespace

absl::StatusOr<bool> DeadNodeElimination::Run(Graph* graph) const {
  bool changed = false;
  for (Node& node : graph->nodes()) {
    if (node.removed || !IsPassThrough(*graph, node)) continue;
    const ValueId in = node.inputs[0], out = node.outputs[0];
    if (graph->IsGraphOutput(out)) continue;
    graph->ReplaceAllUses(out, in);
    node.removed = true;
    changed = true;
  }
  // Mark live values backwards from the outputs.
  std::vector<bool> live(graph->num_values(), false);
  for (ValueId output : graph->outputs()) live[static_cast<size_t>(output)] = true;
  auto& nodes = graph->nodes();
  for (size_t i = nodes.size(); i-- > 0;) {
    Node& node = nodes[i];
    if (node.removed) continue;
    bool needed = false;
    for (ValueId output : node.outputs) {
      if (output != kNoValue && live[static_cast<size_t>(output)]) needed = true;
    }
    if (!needed) {
      node.removed = true;
      changed = true;
      continue;
    }
    for (ValueId input : node.inputs) {
      if (input != kNoValue) live[static_cast<size_t>(input)] = true;
    }
  }
  graph->Compact();
  return changed;
}

}  // namespace brigade::engine::onnx
