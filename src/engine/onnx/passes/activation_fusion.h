#ifndef BRIGADE_ENGINE_ONNX_PASSES_ACTIVATION_FUSION_H_
#define BRIGADE_ENGINE_ONNX_PASSES_ACTIVATION_FUSION_H_

// ActivationFusion: turns fp32 Conv into ai.brigade.FusedConv and folds the activation that
// follows a FusedConv or FusedMatMul into it as a oneDNN eltwise post-op, applied while the
// result is still in registers.
//
//   X ─Conv─► c ─Relu─► Y                   ⇒   X ─FusedConv[post_ops: Relu]─► Y
//   X ─FusedMatMul─► t ─Gelu─► Y            ⇒   X ─FusedMatMul[post_ops: Gelu]─► Y
//   X ─FusedConv[Add]─► t ─Clip(0, 6)─► Y   ⇒   X ─FusedConv[Add, Clip(0,6)]─► Y
//   X ─BatchNormalization─► t ─Relu─► Y     ⇒   X ─ai.brigade.FusedBatchNorm[relu=1]─► Y  (fp32)
//
// Activations: Relu, LeakyRelu, Clip (constant bounds), Sigmoid, HardSigmoid, HardSwish, Tanh,
// and ai.brigade.Gelu / ai.brigade.Swish. The producer's output must feed only the activation.

#include "engine/onnx/passes/pass.h"

namespace brigade::engine::onnx {

class ActivationFusion final : public GraphPass {
 public:
  std::string_view name() const override { return "activation_fusion"; }
  absl::StatusOr<bool> Run(Graph* graph) const override;
};

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_PASSES_ACTIVATION_FUSION_H_
