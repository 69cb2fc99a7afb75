#include "engine/onnx/passes/gelu_fusion.h"

#include <cmath>

#include "engine/onnx/passes/pass_util.h"

namespace brigade::engine::onnx {
namespace {

bool Near(std::optional<double> v, double want) {
  return v.has_value() && std::abs(*v - want) <= 1e-4 * std::abs(want);
}

// The operand of binary `node` other than `id`, or kNoValue.
ValueId Other(const Node& node, ValueId id) {
  if (node.inputs.size() != 2) return kNoValue;
  if (node.inputs[0] == id) return node.inputs[1];
  if (node.inputs[1] == id) return node.inputs[0];
  return kNoValue;
}

// The single reader of `id` when it is a live `op`.
Node* SoleReader(Graph* graph, const GraphIndex& index, ValueId id, std::string_view op) {
  if (!index.HasSingleConsumer(id)) return nullptr;
  Node& node = graph->nodes()[static_cast<size_t>(index.consumers(id)[0])];
  return IsOp(node, op) ? &node : nullptr;
}

}  // namespace

absl::StatusOr<bool> GeluFusion::Run(Graph* graph) const {
  bool changed = false;
  const GraphIndex index(*graph);
  constexpr double kSqrt2 = 1.4142135623730951;
  for (Node& erf : graph->nodes()) {
    if (!IsOp(erf, "Erf")) continue;
    // Erf(X / √2) or Erf(X · 1/√2).
    const int p = index.producer(erf.inputs[0]);
    if (p < 0 || !index.HasSingleConsumer(erf.inputs[0])) continue;
    Node& scale = graph->nodes()[static_cast<size_t>(p)];
    ValueId x = kNoValue;
    if (IsOp(scale, "Div") && Near(ScalarConstant(*graph, scale.inputs[1]), kSqrt2)) {
      x = scale.inputs[0];
    } else if (IsOp(scale, "Mul")) {
      for (size_t k = 0; k < 2; ++k) {
        if (Near(ScalarConstant(*graph, scale.inputs[k]), 1.0 / kSqrt2)) x = scale.inputs[1 - k];
      }
    }
    if (x == kNoValue || graph->value(x).dtype != DataType::kFp32) continue;
    // Add(Erf, 1)
    Node* add = SoleReader(graph, index, erf.outputs[0], "Add");
    if (add == nullptr || !Near(ScalarConstant(*graph, Other(*add, erf.outputs[0])), 1.0)) {
      continue;
    }
    // Mul(Add, X) then Mul(·, 0.5), or Mul(Add, Mul(X, 0.5)).
    Node* mul = SoleReader(graph, index, add->outputs[0], "Mul");
    if (mul == nullptr) continue;
    const ValueId partner = Other(*mul, add->outputs[0]);
    Node* half = nullptr;    // the Mul by 0.5
    Node* result = nullptr;  // the node whose output becomes Gelu's
    if (partner == x) {
      half = SoleReader(graph, index, mul->outputs[0], "Mul");
      if (half == nullptr || !Near(ScalarConstant(*graph, Other(*half, mul->outputs[0])), 0.5)) {
        continue;
      }
      result = half;
    } else {
      const int q = index.producer(partner);
      if (q < 0 || !index.HasSingleConsumer(partner)) continue;
      half = &graph->nodes()[static_cast<size_t>(q)];
      if (!IsOp(*half, "Mul") || Other(*half, x) == kNoValue ||
          !Near(ScalarConstant(*graph, Other(*half, x)), 0.5)) {
        continue;
      }
      result = mul;
    }
    Node gelu;
    gelu.name = erf.name + "/Gelu";
    gelu.op_type = "Gelu";
    gelu.domain = std::string(kBrigadeDomain);
    gelu.opset = 1;
    gelu.inputs = {x};
    gelu.outputs = {result->outputs[0]};
    for (Node* n : {&scale, add, mul, half}) n->removed = true;
    erf = std::move(gelu);
    changed = true;
  }
  graph->Compact();
  return changed;
}

}  // namespace brigade::engine::onnx
