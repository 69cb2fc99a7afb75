#ifndef BRIGADE_ENGINE_ONNX_PASSES_QDQ_FUSION_H_
#define BRIGADE_ENGINE_ONNX_PASSES_QDQ_FUSION_H_

// QdqFusion: turns the QDQ form of a quantized Conv or MatMul (what quantization tools and
// ONNX Runtime's static quantizer emit) into one QLinearConv / QLinearMatMul, which runs as a
// oneDNN u8s8 primitive (s32 accumulation, requantization in the same pass).
//
//   x_q ─DequantizeLinear─┐
//   w_q ─DequantizeLinear─┴─Conv(+ bias b)─► [Relu | Clip] ─QuantizeLinear(y_scale, y_zp)─► y_q
//     ⇒  QLinearConv(x_q, x_scale, x_zp, w_q, w_scale, w_zp, y_scale, y_zp, b_q)[post_ops]
//
// with b_q = round(b / (x_scale · w_scale[c])) as int32. Applies when the weights are constant
// s8 with zero point 0 (or u8 with zero point 128), x and y are per-tensor, weights per-tensor or
// per-output-channel, all scales and zero points constants; MatMul also needs 2-D weights.
// Dequantized values read elsewhere keep their DequantizeLinear. On a CPU without VNNI the pass
// fuses only uint8 inputs with 7-bit weights (|w| <= 64, what reduce_range quantization writes);
// other groups stay in float (oneDNN's int8 kernels saturate there; see DnnlInt8IsExactFor).
//
// A QLinearConv / QLinearMatMul whose output goes DequantizeLinear → Clip → QuantizeLinear with
// its own output scale and zero point takes the Clip as a post-op too (exactly).
//
// The residual Add between them, in the same form, becomes one pass over the 8-bit operands:
//
//   a_q ─DequantizeLinear─┐
//   b_q ─DequantizeLinear─┴─Add─► [Relu] ─QuantizeLinear(c_scale, c_zp)─► c_q
//     ⇒  ai.brigade QLinearAdd(a_q, a_scale, a_zp, b_q, b_scale, b_zp, c_scale, c_zp)[Relu]
//
// when all of it is per-tensor and constant and a_q, b_q and c_q have one type (and a_q and b_q
// one static shape). It computes the same bytes as the four nodes (kernels/qlinear_add.cc); in
// an INT8 ResNet-50 they were a third of the run.

#include "engine/onnx/passes/pass.h"

namespace brigade::engine::onnx {

class QdqFusion final : public GraphPass {
 public:
  std::string_view name() const override { return "qdq_fusion"; }
  absl::StatusOr<bool> Run(Graph* graph) const override;
};

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_PASSES_QDQ_FUSION_H_
