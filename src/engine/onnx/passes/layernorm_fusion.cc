#include "engine/onnx/passes/layernorm_fusion.h"

#include <vector>

#include "engine/onnx/passes/pass_util.h"

namespace brigade::engine::onnx {
namespace {

// True for a ReduceMean over the last axis only, with keepdims.
bool ReducesLastAxis(const Graph& graph, const Node& node) {
  if (!IsOp(node, "ReduceMean") || node.attributes.GetInt("keepdims", 1) != 1) return false;
  std::vector<int64_t> axes(node.attributes.GetInts("axes").begin(),
                            node.attributes.GetInts("axes").end());
  if (node.has_input(1)) {
    const Tensor* t = ConstantOf(graph, node.inputs[1]);
    if (t == nullptr || t->dtype() != DataType::kInt64) return false;
    axes.assign(t->values<int64_t>().begin(), t->values<int64_t>().end());
  }
  if (axes.size() != 1) return false;
  const Value& x = graph.value(node.inputs[0]);
  if (axes[0] == -1) return true;
  return x.shape.has_value() && axes[0] == static_cast<int64_t>(x.shape->size()) - 1;
}

// The node producing `id`, when it is a live `op` (any number of readers), else null.
Node* ProducerOf(Graph* graph, const GraphIndex& index, ValueId id, std::string_view op) {
  if (id == kNoValue) return nullptr;
  const int p = index.producer(id);
  if (p < 0) return nullptr;
  Node& node = graph->nodes()[static_cast<size_t>(p)];
  return IsOp(node, op) ? &node : nullptr;
}

}  // namespace

absl::StatusOr<bool> LayerNormFusion::Run(Graph* graph) const {
  bool changed = false;
  const GraphIndex index(*graph);
  auto& nodes = graph->nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    // Anchor on the final Add(β).
    Node& add_beta = nodes[i];
    if (!IsOp(add_beta, "Add") || add_beta.inputs.size() != 2) continue;
    Node* mul_gamma = nullptr;
    ValueId beta = kNoValue;
    for (size_t k = 0; k < 2 && mul_gamma == nullptr; ++k) {
      Node* m = ProducerOf(graph, index, add_beta.inputs[k], "Mul");
      if (m != nullptr && index.HasSingleConsumer(add_beta.inputs[k])) {
        mul_gamma = m;
        beta = add_beta.inputs[1 - k];
      }
    }
    if (mul_gamma == nullptr || ConstantOf(*graph, beta) == nullptr) continue;
    // Mul(normalized, γ)
    Node* div = nullptr;
    ValueId gamma = kNoValue;
    for (size_t k = 0; k < 2 && div == nullptr; ++k) {
      Node* d = ProducerOf(graph, index, mul_gamma->inputs[k], "Div");
      if (d != nullptr && index.HasSingleConsumer(mul_gamma->inputs[k])) {
        div = d;
        gamma = mul_gamma->inputs[1 - k];
      }
    }
    if (div == nullptr || ConstantOf(*graph, gamma) == nullptr) continue;
    // Div(D, Sqrt(Add(V, ε)))
    const ValueId d_value = div->inputs[0];
    Node* sub = ProducerOf(graph, index, d_value, "Sub");
    Node* sqrt = ProducerOf(graph, index, div->inputs[1], "Sqrt");
    if (sub == nullptr || sqrt == nullptr) continue;
    Node* add_eps = ProducerOf(graph, index, sqrt->inputs[0], "Add");
    if (add_eps == nullptr) continue;
    Node* var_mean = nullptr;
    ValueId eps_value = kNoValue;
    for (size_t k = 0; k < 2 && var_mean == nullptr; ++k) {
      Node* r = ProducerOf(graph, index, add_eps->inputs[k], "ReduceMean");
      if (r != nullptr) {
        var_mean = r;
        eps_value = add_eps->inputs[1 - k];
      }
    }
    const std::optional<double> eps = ScalarConstant(*graph, eps_value);
    if (var_mean == nullptr || !eps.has_value() || !ReducesLastAxis(*graph, *var_mean)) continue;
    Node* pow = ProducerOf(graph, index, var_mean->inputs[0], "Pow");
    if (pow == nullptr || pow->inputs[0] != d_value) continue;
    const std::optional<double> two = ScalarConstant(*graph, pow->inputs[1]);
    if (!two.has_value() || *two != 2.0) continue;
    // Sub(X, ReduceMean(X))
    const ValueId x = sub->inputs[0];
    Node* mean = ProducerOf(graph, index, sub->inputs[1], "ReduceMean");
    if (mean == nullptr || mean->inputs[0] != x || !ReducesLastAxis(*graph, *mean)) continue;
    // Intermediate values must not escape the pattern.
    const auto only = [&](ValueId v, size_t readers) {
      return index.consumers(v).size() == readers && !graph->IsGraphOutput(v);
    };
    if (!only(mean->outputs[0], 1) || !only(d_value, 2) || !only(pow->outputs[0], 1) ||
        !only(var_mean->outputs[0], 1) || !only(add_eps->outputs[0], 1) ||
        !only(sqrt->outputs[0], 1)) {
      continue;
    }
    // γ and β are per-element vectors of the last axis.
    const Value& xv = graph->value(x);
    const Tensor* g = ConstantOf(*graph, gamma);
    const Tensor* b = ConstantOf(*graph, beta);
    if (!xv.shape.has_value() || xv.shape->empty() || xv.shape->back() <= 0 ||
        g->dtype() != DataType::kFp32 || b->dtype() != DataType::kFp32 ||
        g->num_elements() != xv.shape->back() || b->num_elements() != xv.shape->back() ||
        xv.dtype != DataType::kFp32) {
      continue;
    }
    Node ln;
    ln.name = add_beta.name + "/LayerNormalization";
    ln.op_type = "LayerNormalization";
    ln.domain = std::string(kBrigadeDomain);
    ln.opset = 1;
    ln.inputs = {x, gamma, beta};
    ln.outputs = {add_beta.outputs[0]};
    ln.attributes.SetInt("axis", -1);
    ln.attributes.SetFloat("epsilon", static_cast<float>(*eps));
    for (Node* n : {mean, sub, pow, var_mean, add_eps, sqrt, div, mul_gamma}) n->removed = true;
    add_beta = std::move(ln);
    changed = true;
  }
  graph->Compact();
  return changed;
}

}  // namespace brigade::engine::onnx
