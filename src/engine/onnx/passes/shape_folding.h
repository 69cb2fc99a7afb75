#ifndef BRIGADE_ENGINE_ONNX_PASSES_SHAPE_FOLDING_H_
#define BRIGADE_ENGINE_ONNX_PASSES_SHAPE_FOLDING_H_

// ShapeFolding: replaces shape computations whose answer is already known from static shapes by
// constants, so constant folding can collapse the Shape→Gather→Unsqueeze→Concat→Reshape chains
// exporters emit.
//
//   X [-1,128,768] ─Shape─► s ─Gather(2)─► 768          ⇒   768 (constant)
//   X [8,3]        ─Shape─► s                            ⇒   [8,3] (constant)
//   X [8,3]        ─Size──► n                            ⇒   24 (constant)
//
// Dimensions unknown before run time (the batch) stay; the planner evaluates what remains once
// per input-shape signature, so a Shape chain never runs per request either way.

#include "engine/onnx/passes/pass.h"

namespace brigade::engine::onnx {

class ShapeFolding final : public GraphPass {
 public:
  std::string_view name() const override { return "shape_folding"; }
  absl::StatusOr<bool> Run(Graph* graph) const override;
};

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_PASSES_SHAPE_FOLDING_H_
