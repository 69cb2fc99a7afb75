#include "engine/onnx/passes/matmul_fusion.h"

#include "core/strings.h"
#include "engine/onnx/passes/pass_util.h"

namespace brigade::engine::onnx {
namespace {

bool IsFp32(const Graph& graph, ValueId id) {
  return id != kNoValue && graph.value(id).dtype == DataType::kFp32;
}

// The constant bias `id` when it is fp32 and broadcasts along the last dim only ([N] or [1,N]).
const Tensor* RowBias(const Graph& graph, ValueId id, int64_t n) {
  const Tensor* t = ConstantOf(graph, id);
  if (t == nullptr || t->dtype() != DataType::kFp32 || t->num_elements() != n || n <= 0) {
    return nullptr;
  }
  for (size_t d = 0; d + 1 < t->shape().size(); ++d) {
    if (t->shape()[d] != 1) return nullptr;
  }
  return t;
}

}  // namespace

absl::StatusOr<bool> MatMulFusion::Run(Graph* graph) const {
  bool changed = false;
  auto& nodes = graph->nodes();
  // Gemm with a constant (or absent) C.
  for (Node& node : nodes) {
    if (!IsOp(node, "Gemm") || !IsFp32(*graph, node.input(0))) continue;
    const float alpha = node.attributes.GetFloat("alpha", 1.0f);
    const float beta = node.attributes.GetFloat("beta", 1.0f);
    if (alpha == 0.0f) continue;
    if (node.has_input(2) && beta != 0.0f) {
      const Tensor* c = ConstantOf(*graph, node.inputs[2]);
      if (c == nullptr || c->dtype() != DataType::kFp32) continue;
      if (beta != 1.0f) {
        auto scaled = c->Clone();
        if (!scaled.ok()) continue;
        for (float& v : scaled->mutable_values<float>()) v *= beta;
        node.inputs[2] = graph->AddConstant(StrCat(node.name, "/C"), *std::move(scaled));
      }
    } else if (node.inputs.size() > 2) {
      node.inputs.resize(2);
    }
    node.op_type = "FusedMatMul";
    node.domain = std::string(kBrigadeDomain);
    node.attributes.Erase("beta");
    if (alpha == 1.0f) node.attributes.Erase("alpha");
    changed = true;
  }
  // MatMul (+ bias Add).
  const GraphIndex index(*graph);
  for (Node& node : nodes) {
    if (!IsOp(node, "MatMul") || !IsFp32(*graph, node.input(0)) || !IsFp32(*graph, node.input(1))) {
      continue;
    }
    node.op_type = "FusedMatMul";
    node.domain = std::string(kBrigadeDomain);
    changed = true;
    const ValueId out = node.outputs[0];
    if (!index.HasSingleConsumer(out)) continue;
    Node& add = nodes[static_cast<size_t>(index.consumers(out)[0])];
    if (!IsOp(add, "Add") || add.inputs.size() != 2) continue;
    const ValueId other = add.inputs[0] == out ? add.inputs[1] : add.inputs[0];
    const Value& b = graph->value(node.inputs[1]);
    if (!b.shape.has_value() || b.shape->size() < 2) continue;
    const int64_t n = b.shape->back();
    if (RowBias(*graph, other, n) == nullptr) continue;
    // The bias must not widen the output (a [N] bias on a [.., M, N] product never does).
    node.inputs.push_back(other);
    node.outputs[0] = add.outputs[0];
    add.removed = true;
  }
  graph->Compact();
  return changed;
}

}  // namespace brigade::engine::onnx
