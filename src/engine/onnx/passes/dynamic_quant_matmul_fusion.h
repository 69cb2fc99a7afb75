#ifndef BRIGADE_ENGINE_ONNX_PASSES_DYNAMIC_QUANT_MATMUL_FUSION_H_
#define BRIGADE_ENGINE_ONNX_PASSES_DYNAMIC_QUANT_MATMUL_FUSION_H_

// DynamicQuantMatMulFusion: a dynamically quantized Linear layer, as `brigade optimize quantize
// --mode dynamic` and ONNX Runtime's dynamic quantizer write it, becomes one oneDNN pass
// (kernels/dynamic_quant_matmul.cc):
//
//   x ─DynamicQuantizeLinear─► (x_q, x_scale, x_zp)
//   MatMulInteger(x_q, W, x_zp) ─Cast(float)─► c ;  s = Mul(x_scale, w_scale) ;  y = Mul(c, s)
//   [ y ─Add(bias)─► z ]
//     ⇒  ai.brigade.DynamicQuantMatMul(x_q, x_scale, x_zp, W, w_scale, [bias]) ─► y [or z]
//
// Mul operands in either order. Applies when W is a constant int8 [K, N] (no zero point, or
// zeros), w_scale a constant of 1 or N values, the bias a constant fp32 [N] whose Add is y's only
// reader, and each intermediate (the int32 product, c, and y before the bias) has no other
// reader; s may have others (it stays then). DynamicQuantizeLinear stays: its outputs usually
// feed several layers (attention's Q, K and V). Without the fusion the int32 product goes to
// memory and back and Cast, Mul and Add each make a pass over it (their share of an INT8
// DistilBERT run is below). On a CPU where oneDNN's int8 products are not exact
// (DnnlInt8IsExactFor) nothing changes and MatMulInteger runs its integer loops.
//
// Thread safety: stateless. Failure: none beyond the pass interface's.

#include "engine/onnx/passes/pass.h"

namespace brigade::engine::onnx {

class DynamicQuantMatMulFusion final : public GraphPass {
 public:
  std::string_view name() const override { return "dynamic_quant_matmul_fusion"; }
  absl::StatusOr<bool> Run(Graph* graph) const override;
};

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_PASSES_DYNAMIC_QUANT_MATMUL_FUSION_H_
