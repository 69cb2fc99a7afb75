#include "engine/onnx/passes/optimizer.h"

#include "core/status_macros.h"
#include "core/strings.h"
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
  return report;
}

}  // namespace brigade::engine::onnx
