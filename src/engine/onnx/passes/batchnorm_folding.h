#ifndef BRIGADE_ENGINE_ONNX_PASSES_BATCHNORM_FOLDING_H_
#define BRIGADE_ENGINE_ONNX_PASSES_BATCHNORM_FOLDING_H_

// BatchNormFolding: folds an inference BatchNormalization that follows a Conv into the Conv's
// weights and bias.
//
//   X ─Conv(W, B)─► c ─BatchNormalization(γ, β, μ, σ²)─► Y
//     ⇒  X ─Conv(W', B')─► Y      with a = γ / √(σ² + ε) per output channel,
//                                  W' = W · a,  B' = (B − μ) · a + β
//
// Applies when the Conv's output feeds only the BatchNormalization and W, B, γ, β, μ, σ² are
// fp32 constants.

#include "engine/onnx/passes/pass.h"

namespace brigade::engine::onnx {

class BatchNormFolding final : public GraphPass {
 public:
  std::string_view name() const override { return "batchnorm_folding"; }
  absl::StatusOr<bool> Run(Graph* graph) const override;
};

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_PASSES_BATCHNORM_FOLDING_H_
