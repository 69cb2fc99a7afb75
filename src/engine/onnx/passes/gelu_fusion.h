#ifndef BRIGADE_ENGINE_ONNX_PASSES_GELU_FUSION_H_
#define BRIGADE_ENGINE_ONNX_PASSES_GELU_FUSION_H_

// GeluFusion: recognizes the exact (erf) GELU as exporters decompose it and replaces it by one
// ai.brigade.Gelu, which ActivationFusion then folds into the preceding matmul.
//
//   Y = Mul(Mul(X, Add(Erf(Div(X, √2)), 1)), 0.5)      ⇒   Y = Gelu(X)
//
// Also accepted: Mul(X, 1/√2) for the Div, the 0.5 applied to X first
// (Mul(Mul(X, 0.5), Add(Erf(...), 1))), and either operand order of each Mul/Add.

#include "engine/onnx/passes/pass.h"

namespace brigade::engine::onnx {

class GeluFusion final : public GraphPass {
 public:
  std::string_view name() const override { return "gelu_fusion"; }
  absl::StatusOr<bool> Run(Graph* graph) const override;
};

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_PASSES_GELU_FUSION_H_
