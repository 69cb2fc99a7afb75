#include "engine/onnx/passes/swish_fusion.h"

#include <cmath>
#include <string>

#include "engine/onnx/passes/pass_util.h"

namespace brigade::engine::onnx {
namespace {

// What Mul(x, gate(x)) becomes, or "" when `gate` is not a gate of `x` this pass knows.
std::string GatedActivation(const Node& gate, ValueId x) {
  if (gate.removed || gate.inputs.size() != 1 || gate.inputs[0] != x) return "";
  if (IsOp(gate, "Sigmoid")) return "Swish";
  if (IsOp(gate, "HardSigmoid")) {
    const float alpha = gate.attributes.GetFloat("alpha", 0.2f);
    const float beta = gate.attributes.GetFloat("beta", 0.5f);
    if (std::abs(alpha - 1.0f / 6.0f) <= 1e-6f && beta == 0.5f) return "HardSwish";
  }
  return "";
}

}  // namespace

absl::StatusOr<bool> SwishFusion::Run(Graph* graph) const {
  bool changed = false;
  const GraphIndex index(*graph);
  for (Node& mul : graph->nodes()) {
    if (!IsOp(mul, "Mul") || mul.inputs.size() != 2) continue;
    for (size_t k = 0; k < 2; ++k) {
      const ValueId x = mul.inputs[k];
      const ValueId g = mul.inputs[1 - k];
      if (x == kNoValue || g == kNoValue || graph->value(x).dtype != DataType::kFp32) continue;
      const int p = index.producer(g);
      if (p < 0) continue;
      Node& gate = graph->nodes()[static_cast<size_t>(p)];
      const std::string op = GatedActivation(gate, x);
      if (op.empty()) continue;
      if (index.HasSingleConsumer(g)) gate.removed = true;
      Node fused;
      fused.name = mul.name + "/" + op;
      fused.op_type = op;
      fused.domain = op == "Swish" ? std::string(kBrigadeDomain) : "";
      fused.opset = op == "Swish" ? 1 : 14;
      fused.inputs = {x};
      fused.outputs = {mul.outputs[0]};
      mul = std::move(fused);
      changed = true;
      break;
    }
  }
  graph->Compact();
  return changed;
}

}  // namespace brigade::engine::onnx
