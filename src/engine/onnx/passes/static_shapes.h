#ifndef BRIGADE_ENGINE_ONNX_PASSES_STATIC_SHAPES_H_
#define BRIGADE_ENGINE_ONNX_PASSES_STATIC_SHAPES_H_

// StaticShapes: gives every value the static shape the fusion passes need, including the ones
// ONNX's shape inference leaves unknown (anything downstream of a Reshape whose target is
// computed from Shape ops, as in every exported transformer).
//
// It runs the planner twice in shape-only mode (no primitives are built): once with every
// variable input dimension set to 1, once set to 2. A dimension equal in both runs is static;
// one that differs is variable (-1). Shape subgraphs are evaluated for real, so
//
//   x [-1,128,768] ─Reshape(x, [Shape(x)[0], 128, 12, 64])─► q   q: [?] → [-1,128,12,64]
//
// When a probe fails (a model whose shapes depend on input contents) the pass changes nothing.

#include "engine/onnx/passes/pass.h"

namespace brigade::engine::onnx {

class StaticShapes final : public GraphPass {
 public:
  std::string_view name() const override { return "static_shapes"; }
  absl::StatusOr<bool> Run(Graph* graph) const override;
};

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_PASSES_STATIC_SHAPES_H_
