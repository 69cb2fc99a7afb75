#ifndef BRIGADE_ENGINE_ONNX_EXEC_FLOPS_H_
#define BRIGADE_ENGINE_ONNX_EXEC_FLOPS_H_

// Floating-point operation counts of the compute-heavy ops, from the shapes the planner knows:
// 2 × multiply-accumulates for Conv, ConvTranspose, MatMul, Gemm and their fused and quantized
// forms (the convention model FLOP figures use: ResNet-50 ≈ 8.2 GFLOP at 224²). Other ops count
// zero: they are memory-bound and their FLOPs would only blur the GFLOP/s figure.
// Thread safety: a pure function.

#include <cstdint>

#include "engine/onnx/ir/graph.h"
#include "engine/onnx/kernels/kernel.h"

namespace brigade::engine::onnx {

int64_t EstimateFlops(const Node& node, const KernelContext& ctx);

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_EXEC_FLOPS_H_
