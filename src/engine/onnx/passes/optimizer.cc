#include "engine/onnx/passes/optimizer.h"

#include <algorithm>

#include "core/status_macros.h"
#include "core/strings.h"
#include "engine/onnx/exec/compiled_model.h"
#include "engine/onnx/passes/activation_fusion.h"
#include "engine/onnx/passes/attention_fusion.h"
#include "engine/onnx/passes/batchnorm_folding.h"
#include "engine/onnx/passes/constant_folding.h"
#include "engine/onnx/passes/dead_node_elimination.h"
#include "engine/onnx/passes/dynamic_quant_matmul_fusion.h"
#include "engine/onnx/passes/gelu_fusion.h"
#include "engine/onnx/passes/layernorm_fusion.h"
#include "engine/onnx/passes/matmul_fusion.h"
#include "engine/onnx/passes/qdq_fusion.h"
#include "engine/onnx/passes/residual_add_fusion.h"
#include "engine/onnx/passes/shape_folding.h"
#include "engine/onnx/passes/static_shapes.h"
#include "engine/onnx/passes/swish_fusion.h"

namespace brigade::engine::onnx {
namespace {

// Drops subgraph `subgraph`'s captured inputs for which `drop(j)` holds.
template <typename Drop>
void DropCaptures(Attribute* subgraph, Drop drop) {
  Graph& g = *subgraph->g;
  const size_t formal = g.inputs().size() - subgraph->captures.size();
  std::vector<ValueId> inputs(g.inputs().begin(), g.inputs().begin() + formal);
  std::vector<int> captures;
  for (size_t j = 0; j < subgraph->captures.size(); ++j) {
    if (drop(j)) continue;
    inputs.push_back(g.inputs()[formal + j]);
    captures.push_back(subgraph->captures[j]);
  }
  g.inputs() = std::move(inputs);
  subgraph->captures = std::move(captures);
}

// Optimizes the subgraphs of `graph`'s nodes (after `graph`'s own passes, so that they see its
// folded constants). A captured outer constant becomes the subgraph's own constant (sharing the
// tensor), so the subgraph's passes fold and fuse with it (a Loop body's MatMul gets packed
// weights); captured inputs the optimized subgraph no longer reads are dropped, and so are the
// node inputs that fed them.
absl::Status OptimizeSubgraphs(Graph* graph, const OptimizeOptions& options) {
  for (Node& node : graph->nodes()) {
    if (node.removed) continue;
    std::vector<Attribute*> subgraphs = Subgraphs(node);
    if (subgraphs.empty()) continue;
    // Captured values are the node's trailing inputs, from the lowest index any capture uses.
    size_t first_captured = node.inputs.size();
    for (const Attribute* subgraph : subgraphs) {
      for (int index : subgraph->captures) {
        first_captured = std::min(first_captured, static_cast<size_t>(index));
      }
    }
    for (Attribute* subgraph : subgraphs) {
      Graph& g = *subgraph->g;
      const size_t formal = g.inputs().size() - subgraph->captures.size();
      DropCaptures(subgraph, [&](size_t j) {
        const Value& outer = graph->value(node.inputs[static_cast<size_t>(subgraph->captures[j])]);
        if (!outer.constant.has_value()) return false;
        Value& inner = g.value(g.inputs()[formal + j]);
        inner.dtype = outer.dtype;
        inner.shape = outer.constant->shape();
        inner.constant = outer.constant;
        return true;
      });
      auto report = OptimizeGraph(&g, options);
      if (!report.ok()) {
        return absl::Status(report.status().code(),
                            StrCat("node '", node.name, "' (", node.op_type,
                                   ") subgraph: ", report.status().message()));
      }
      const std::vector<int> uses = CountUses(g);
      const size_t kept_formal = g.inputs().size() - subgraph->captures.size();
      DropCaptures(subgraph, [&](size_t j) {
        return uses[static_cast<size_t>(g.inputs()[kept_formal + j])] == 0;
      });
    }
    // Rebuild the captured tail from what the subgraphs still read.
    std::vector<ValueId> tail;
    for (Attribute* subgraph : subgraphs) {
      for (int& index : subgraph->captures) {
        const ValueId id = node.inputs[static_cast<size_t>(index)];
        auto it = std::find(tail.begin(), tail.end(), id);
        if (it == tail.end()) it = tail.insert(tail.end(), id);
        index = static_cast<int>(first_captured + static_cast<size_t>(it - tail.begin()));
      }
    }
    node.inputs.resize(first_captured);
    node.inputs.insert(node.inputs.end(), tail.begin(), tail.end());
  }
  graph->Compact();
  return absl::OkStatus();
}

}  // namespace

std::vector<std::unique_ptr<GraphPass>> DefaultPasses(const OptimizeOptions& options) {
  std::vector<std::unique_ptr<GraphPass>> passes;
  passes.push_back(std::make_unique<DeadNodeElimination>());
  passes.push_back(std::make_unique<StaticShapes>());
  // Before constant folding (which would turn the weights' DequantizeLinear into fp32 weights)
  // and the fp32 fusions: QDQ groups become int8 primitives.
  passes.push_back(std::make_unique<QdqFusion>());
  passes.push_back(std::make_unique<ShapeFolding>());
  passes.push_back(std::make_unique<ConstantFolding>(options.fold_budget_bytes));
  passes.push_back(std::make_unique<DeadNodeElimination>());
  passes.push_back(std::make_unique<DynamicQuantMatMulFusion>());
  passes.push_back(std::make_unique<BatchNormFolding>());
  passes.push_back(std::make_unique<LayerNormFusion>());
  passes.push_back(std::make_unique<GeluFusion>());
  passes.push_back(std::make_unique<MatMulFusion>());
  passes.push_back(std::make_unique<AttentionFusion>());
  // x · gate(x) → one activation of x, so that the next pass folds it into x's producer.
  passes.push_back(std::make_unique<SwishFusion>());
  passes.push_back(std::make_unique<ActivationFusion>());
  passes.push_back(std::make_unique<ResidualAddFusion>());
  // Add → Relu: the activation after a residual joins the same primitive.
  passes.push_back(std::make_unique<ActivationFusion>());
  passes.push_back(std::make_unique<DeadNodeElimination>());
  return passes;
}

absl::StatusOr<OptimizeReport> OptimizeGraph(Graph* graph, const OptimizeOptions& options) {
  OptimizeReport report;
  report.nodes_before = graph->live_node_count();
  for (const auto& pass : DefaultPasses(options)) {
    auto changed = pass->Run(graph);
    if (!changed.ok()) {
      return absl::Status(changed.status().code(),
                          StrCat("pass ", pass->name(), ": ", changed.status().message()));
    }
    BRIGADE_RETURN_IF_ERROR(graph->SortTopologically());
    report.passes.push_back(
        PassReport{std::string(pass->name()), graph->live_node_count(), *changed});
  }
  BRIGADE_RETURN_IF_ERROR(OptimizeSubgraphs(graph, options));
  return report;
}

}  // namespace brigade::engine::onnx
