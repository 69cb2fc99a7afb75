#ifndef BRIGADE_ENGINE_ONNX_PASSES_OPTIMIZER_H_
#define BRIGADE_ENGINE_ONNX_PASSES_OPTIMIZER_H_

// The pass pipeline the ONNX backend runs at load, and its report (node count after each pass,
// which `brigade inspect` prints).
//
// Order matters: folding first (so patterns see constants), then pattern recognition
// (LayerNorm, GELU, attention), then fusion into oneDNN post-ops, then a final sweep. Subgraphs
// (If branches, Loop and Scan bodies) then get the same pipeline, each on its own, after the
// outer constants they read have become theirs; the passes treat a node's captured values as the
// ordinary inputs they are (attribute.h), so a value only a subgraph reads stays live.
// Thread safety: free functions.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/onnx/ir/graph.h"
#include "engine/onnx/passes/constant_folding.h"
#include "engine/onnx/passes/pass.h"

namespace brigade::engine::onnx {

struct PassReport {
  std::string pass;
  size_t nodes_after = 0;
  bool changed = false;
};

struct OptimizeReport {
  size_t nodes_before = 0;
  std::vector<PassReport> passes;
};

struct OptimizeOptions {
  // What constant folding may add to the model's own constants (ConstantFolding).
  size_t fold_budget_bytes = ConstantFolding::kMaxFoldedBytes;
};

std::vector<std::unique_ptr<GraphPass>> DefaultPasses(const OptimizeOptions& options = {});

// Runs DefaultPasses() over `graph`.
absl::StatusOr<OptimizeReport> OptimizeGraph(Graph* graph, const OptimizeOptions& options = {});

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_PASSES_OPTIMIZER_H_
