#include "engine/onnx/passes/optimizer.h"

#include "core/status_macros.h"
#include "core/strings.h"
#include "engine/onnx/passes/constant_folding.h"
#include "engine/onnx/passes/dead_node_elimination.h"

namespace brigade::engine::onnx {

std::vector<std::unique_ptr<GraphPass>> DefaultPasses() {
  std::vector<std::unique_ptr<GraphPass>> passes;
  passes.push_back(std::make_unique<DeadNodeElimination>());
  passes.push_back(std::make_unique<ConstantFolding>());
  passes.push_back(std::make_unique<DeadNodeElimination>());
  return passes;
}

absl::StatusOr<OptimizeReport> OptimizeGraph(Graph* graph) {
  OptimizeReport report;
  report.nodes_before = graph->live_node_count();
  for (const auto& pass : DefaultPasses()) {
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
