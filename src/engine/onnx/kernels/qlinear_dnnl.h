#ifndef BRIGADE_ENGINE_ONNX_KERNELS_QLINEAR_DNNL_H_
#define BRIGADE_ENGINE_ONNX_KERNELS_QLINEAR_DNNL_H_

// oneDNN int8 (u8s8) kernels for QLinearConv, QLinearMatMul and MatMulInteger — including the ones
// the QDQ fusion pass builds from DequantizeLinear → Conv/MatMul → QuantizeLinear groups.
//
// The primitive computes, in one pass with s32 accumulation,
//   y = saturate(round(x_scale · w_scale[c] / y_scale · (Σ (x − x_zp)·w + b)) + y_zp)
// with oneDNN's output scales, source/destination zero points and optional eltwise post-ops
// (the node's post_ops), which is QLinearConv's/QLinearMatMul's definition. It applies when the
// weights are constant with a zero weight zero point (s8; u8 weights with zero point 128 are
// shifted to s8), scales and zero points are constants, and x/y are per-tensor, and the CPU has
// VNNI (without it oneDNN's int8 products saturate, unless the weights fit 7 bits and x is u8:
// DnnlInt8IsExactFor); otherwise the factories return null and the exact integer loops in
// qlinear.cc run instead.
// Thread safety: as OpKernel.

#include <cstddef>
#include <memory>
#include <span>

#include "absl/status/statusor.h"
#include "core/data_type.h"
#include "core/tensor.h"
#include "engine/onnx/kernels/kernel.h"

namespace brigade::engine::onnx {

// Whether oneDNN's int8 kernels compute the integer definition exactly on this CPU: only with
// VNNI (vpdpbusd accumulates in s32). Without it they multiply with vpmaddubsw, whose pairwise
// sums saturate at int16: on an AVX2-only CPU a QLinearConv of real weights was off by up to 29
// quantization steps. There the factories below decline (the exact loops run), and the QDQ
// fusion pass leaves DequantizeLinear -> Conv/MatMul -> QuantizeLinear in float. Read from the
// ISA oneDNN will use (DNNL_MAX_CPU_ISA included), once.
bool DnnlInt8IsExact();

// Whether oneDNN's int8 kernels are exact for this input type and these (s8, zero point 0)
// weights: on any CPU with VNNI; without it for uint8 inputs and 7-bit weights, |w| <= 64 (what
// quantizers' reduce_range writes): vpmaddubsw's pairwise sums of u8·s8 products then stay
// within int16 (2 · 255 · 64 = 32640), so nothing saturates.
bool DnnlInt8IsExactFor(DataType x_type, const Tensor& signed_weights);
// Every value of the int8 `weights` is within [-64, 64].
bool WeightsFitSevenBits(const Tensor& weights);

// Whether a QLinearConv with these inputs (as the planner sees them) meets TryDnnlQLinearConv's
// conditions on types, constants and weights, so that its input 0 may stay in the layout the
// producing int8 convolution chose (nhwc for u8): the exact integer loop reads only plain
// inputs. Between ResNet-50's INT8 convolutions that saved a reorder to plain and one back per
// layer, 15% of the run. The primitive can still fail to build; the factory then says so.
bool TakesBlockedQLinearConv(const Node& node, size_t input,
                             std::span<const ValueInfo* const> inputs);

absl::StatusOr<std::unique_ptr<OpKernel>> TryDnnlQLinearConv(KernelContext& ctx);
absl::StatusOr<std::unique_ptr<OpKernel>> TryDnnlQLinearMatMul(KernelContext& ctx);
// MatMulInteger with constant weights (zero point 0, or 128 for u8) and a scalar A zero point,
// constant or computed at run time (dynamic quantization's DynamicQuantizeLinear → MatMulInteger):
// oneDNN's u8s8s32 / s8s8s32 matmul, under the same exactness condition.
absl::StatusOr<std::unique_ptr<OpKernel>> TryDnnlMatMulInteger(KernelContext& ctx);

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_KERNELS_QLINEAR_DNNL_H_
