#ifndef BRIGADE_ENGINE_ONNX_PASSES_LAYERNORM_FUSION_H_
#define BRIGADE_ENGINE_ONNX_PASSES_LAYERNORM_FUSION_H_

// LayerNormFusion: recognizes the decomposed layer normalization exporters emit before opset 17
// and replaces it by one ai.brigade.LayerNormalization (oneDNN's layer normalization primitive).
//
//   μ = ReduceMean(X, axes=[-1]);  D = Sub(X, μ);  V = ReduceMean(Pow(D, 2), axes=[-1])
//   Y = Add(Mul(Div(D, Sqrt(Add(V, ε))), γ), β)
//     ⇒  Y = LayerNormalization(X, γ, β, axis=-1, epsilon=ε)
//
// γ and β must be fp32 constants over the normalized axis; the reductions must be over the last
// axis with keepdims, and no intermediate may be read outside the pattern.

#include "engine/onnx/passes/pass.h"

namespace brigade::engine::onnx {

class LayerNormFusion final : public GraphPass {
 public:
  std::string_view name() const override { return "layernorm_fusion"; }
  absl::StatusOr<bool> Run(Graph* graph) const override;
};

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_PASSES_LAYERNORM_FUSION_H_
