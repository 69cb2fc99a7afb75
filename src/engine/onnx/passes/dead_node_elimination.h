#ifndef BRIGADE_ENGINE_ONNX_PASSES_DEAD_NODE_ELIMINATION_H_
#define BRIGADE_ENGINE_ONNX_PASSES_DEAD_NODE_ELIMINATION_H_

// DeadNodeElimination: removes Identity nodes, Pads of zeros and inference-mode Dropouts (their
// readers read the input directly) and every node none of whose outputs reaches a graph output.
//
//   X ─Identity─► Y ─Relu─► Z (output)          ⇒   X ─Relu─► Z
//   X ─Shape─► S   (S unused)                    ⇒   (removed)
//
// An Identity whose output is itself a graph output stays (the output needs its own tensor).

#include "engine/onnx/passes/pass.h"

namespace brigade::engine::onnx {

class DeadNodeElimination final : public GraphPass {
 public:
  std::string_view name() const override { return "dead_node_elimination"; }
  absl::StatusOr<bool> Run(Graph* graph) const override;
};

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_PASSES_DEAD_NODE_ELIMINATION_H_
