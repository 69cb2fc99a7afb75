#include "engine/onnx/passes/activation_fusion.h"

#include <limits>
#include <optional>

#include "engine/onnx/kernels/post_ops.h"
#include "engine/onnx/passes/pass_util.h"

namespace brigade::engine::onnx {
namespace {

struct Activation {
  std::string op;
  float alpha = 0;
  float beta = 0;
};

// The post-op form of `node`, or nullopt when it is not a fusable activation.
std::optional<Activation> AsActivation(const Graph& graph, const Node& node) {
  if (node.removed) return std::nullopt;
  if (node.domain == kBrigadeDomain && (node.op_type == "Gelu" || node.op_type == "Swish")) {
    return Activation{node.op_type};
  }
  if (!node.domain.empty()) return std::nullopt;
  const std::string& op = node.op_type;
  const AttributeMap& a = node.attributes;
  if (op == "Relu" || op == "Sigmoid" || op == "HardSwish" || op == "Tanh") return Activation{op};
  if (op == "LeakyRelu") return Activation{op, a.GetFloat("alpha", 0.01f), 0};
  if (op == "HardSigmoid") {
    return Activation{op, a.GetFloat("alpha", 0.2f), a.GetFloat("beta", 0.5f)};
  }
  if (op == "Clip") {
    Activation clip{op, -std::numeric_limits<float>::max(), std::numeric_limits<float>::max()};
    for (size_t i = 1; i <= 2; ++i) {
      if (!node.has_input(i)) continue;
      const std::optional<double> bound = ScalarConstant(graph, node.inputs[i]);
      if (!bound.has_value()) return std::nullopt;
      (i == 1 ? clip.alpha : clip.beta) = static_cast<float>(*bound);
    }
    return clip;
  }
  return std::nullopt;
}

bool IsFusedProducer(const Node& node) {
  return !node.removed && node.domain == kBrigadeDomain &&
         (node.op_type == "FusedConv" || node.op_type == "FusedMatMul");
}

}  // namespace

absl::StatusOr<bool> ActivationFusion::Run(Graph* graph) const {
  bool changed = false;
  auto& nodes = graph->nodes();
  for (Node& node : nodes) {
    if (IsOp(node, "Conv") && node.has_input(0) &&
        graph->value(node.inputs[0]).dtype == DataType::kFp32) {
      node.op_type = "FusedConv";
      node.domain = std::string(kBrigadeDomain);
      changed = true;
    }
  }
  // BatchNormalization → Relu (DenseNet's pre-activation order, where the BN cannot fold into a
  // convolution before it): one scale-shift-ReLU pass instead of two passes over memory.
  {
    const GraphIndex index(*graph);
    for (Node& node : nodes) {
      if (!IsOp(node, "BatchNormalization") || node.outputs.size() != 1 || !node.has_input(0) ||
          graph->value(node.inputs[0]).dtype != DataType::kFp32 ||
          node.attributes.GetInt("training_mode", 0) != 0) {
        continue;
      }
      const ValueId out = node.outputs[0];
      if (!index.HasSingleConsumer(out)) continue;
      Node& next = nodes[static_cast<size_t>(index.consumers(out)[0])];
      if (!IsOp(next, "Relu") || next.inputs.empty() || next.inputs[0] != out) continue;
      node.op_type = "FusedBatchNorm";
      node.domain = std::string(kBrigadeDomain);
      node.opset = 1;
      node.attributes.SetInt("relu", 1);
      node.outputs[0] = next.outputs[0];
      next.removed = true;
      changed = true;
    }
  }
  // Repeat until no activation is left to absorb (a chain Relu → Clip folds fully).
  bool progress = true;
  while (progress) {
    progress = false;
    const GraphIndex index(*graph);
    for (Node& node : nodes) {
      if (!IsFusedProducer(node)) continue;
      const ValueId out = node.outputs[0];
      if (!index.HasSingleConsumer(out)) continue;
      Node& next = nodes[static_cast<size_t>(index.consumers(out)[0])];
      if (next.inputs.empty() || next.inputs[0] != out) continue;
      const std::optional<Activation> act = AsActivation(*graph, next);
      if (!act.has_value()) continue;
      AppendPostOp(&node, act->op, act->alpha, act->beta);
      node.outputs[0] = next.outputs[0];
      next.removed = true;
      progress = changed = true;
    }
  }
  graph->Compact();
  return changed;
}

}  // namespace brigade::engine::onnx
