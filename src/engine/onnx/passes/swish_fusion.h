#ifndef BRIGADE_ENGINE_ONNX_PASSES_SWISH_FUSION_H_
#define BRIGADE_ENGINE_ONNX_PASSES_SWISH_FUSION_H_

// SwishFusion: the gated activations exporters write as two nodes, x times a gate of x, become
// one activation, which ActivationFusion (run after) folds into the convolution or matmul that
// produced x as a oneDNN post-op:
//
//   x ─HardSigmoid(1/6, 1/2)─► g ; Mul(x, g)   ⇒   HardSwish(x)        (PyTorch's hardswish at
//                                                                       opsets below 14)
//   x ─Sigmoid─► g ; Mul(x, g)                  ⇒   ai.brigade.Swish(x)  (SiLU)
//
// Either operand order. Without the rewrite x has two readers, so neither node can fold into
// x's producer, and each runs as a separate pass over memory (MobileNetV3's HardSigmoid took 38%
// of its time). The gate node goes when the Mul was its only reader. fp32 only; a HardSigmoid
// with other parameters stays (oneDNN 2.6's hardswish has none).
//
// Thread safety: stateless. Failure: none beyond the pass interface's.

#include "engine/onnx/passes/pass.h"

namespace brigade::engine::onnx {

class SwishFusion final : public GraphPass {
 public:
  std::string_view name() const override { return "swish_fusion"; }
  absl::StatusOr<bool> Run(Graph* graph) const override;
};

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_PASSES_SWISH_FUSION_H_
