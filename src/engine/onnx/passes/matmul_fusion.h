#ifndef BRIGADE_ENGINE_ONNX_PASSES_MATMUL_FUSION_H_
#define BRIGADE_ENGINE_ONNX_PASSES_MATMUL_FUSION_H_

// MatMulFusion: turns fp32 MatMul and Gemm into ai.brigade.FusedMatMul, absorbing a following
// bias Add, so later passes can attach activations and residuals as oneDNN post-ops.
//
//   X ─MatMul(W)─► t ─Add(b)─► Y          ⇒   X ─FusedMatMul(W, b)─► Y   (b constant, [N])
//   X ─Gemm(W, C, α, β, transA, transB)─► Y   ⇒   X ─FusedMatMul(W, β·C, alpha=α, trans*)─► Y
//
// Gemm keeps its own node when C is not a constant (its kernel handles a run-time C).

#include "engine/onnx/passes/pass.h"

namespace brigade::engine::onnx {

class MatMulFusion final : public GraphPass {
 public:
  std::string_view name() const override { return "matmul_fusion"; }
  absl::StatusOr<bool> Run(Graph* graph) const override;
};

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_PASSES_MATMUL_FUSION_H_
