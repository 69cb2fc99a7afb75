#ifndef BRIGADE_ENGINE_ONNX_PASSES_ATTENTION_FUSION_H_
#define BRIGADE_ENGINE_ONNX_PASSES_ATTENTION_FUSION_H_

// AttentionFusion: makes attention's MatMul → scale → (mask) → Softmax → MatMul chain run as
// batched oneDNN matmuls over [batch, heads] with no transposes materialized and the scale
// applied in registers.
//
//   Q ─Transpose(0,2,1,3)─┐
//   K ─Transpose(0,2,3,1)─┴─FusedMatMul─► s ─Div(√d)─► …      ⇒   FusedMatMul(Q, K,
//                                                                   perm_a=[0,2,1,3],
//                                                                   perm_b=[0,2,3,1],
//                                                                   alpha=1/√d) ─► …
//   P, V ─FusedMatMul─► c ─Transpose(0,2,1,3)─► o            ⇒   FusedMatMul(P, V,
//                                                                   perm_out=[0,2,1,3]) ─► o
//
// The Transposes are folded into the matmul's memory strides (oneDNN reads and writes strided
// tensors); the mask Add that follows is absorbed later by ResidualAddFusion, and Softmax runs on
// oneDNN's softmax. Applies to any FusedMatMul, so it also helps other transposed matmuls.

#include "engine/onnx/passes/pass.h"

namespace brigade::engine::onnx {

class AttentionFusion final : public GraphPass {
 public:
  std::string_view name() const override { return "attention_fusion"; }
  absl::StatusOr<bool> Run(Graph* graph) const override;
};

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_PASSES_ATTENTION_FUSION_H_
