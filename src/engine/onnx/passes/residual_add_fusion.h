#ifndef BRIGADE_ENGINE_ONNX_PASSES_RESIDUAL_ADD_FUSION_H_
#define BRIGADE_ENGINE_ONNX_PASSES_RESIDUAL_ADD_FUSION_H_

// ResidualAddFusion: folds an Add that consumes a FusedConv or FusedMatMul output into it as a
// oneDNN binary post-op, so the residual (or attention mask) is added while the result is still
// in registers.
//
//   X ─FusedConv─► c ─Add(c, R)─► Y                ⇒   X ─FusedConv(…, R)[post_ops: Add]─► Y
//   Q ─FusedMatMul(K)─► s ─Add(s, mask)─► Y        ⇒   Q ─FusedMatMul(K, mask)[Add]─► Y
//
// The other operand must broadcast to the output without widening it; for convolutions it must
// match the output exactly or per channel. When both operands come from fused ops, the one
// computed later absorbs the Add. ActivationFusion runs again afterwards for Add → Relu.

#include "engine/onnx/passes/pass.h"

namespace brigade::engine::onnx {

class ResidualAddFusion final : public GraphPass {
 public:
  std::string_view name() const override { return "residual_add_fusion"; }
  absl::StatusOr<bool> Run(Graph* graph) const override;
};

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_PASSES_RESIDUAL_ADD_FUSION_H_
