#ifndef BRIGADE_ENGINE_ONNX_KERNELS_CHANNEL_BROADCAST_H_
#define BRIGADE_ENGINE_ONNX_KERNELS_CHANNEL_BROADCAST_H_

// Add and Mul of a blocked activation (nChw8c / nChw16c, a convolution's output) and a plain
// per-channel or scalar operand ([C, 1, 1], [1 | N, C, 1, 1], one element): a squeeze-and-
// excitation block's scale (itself often a 1×1 convolution's nChw16c output), a per-channel bias.
// Runs on the blocked layout and writes it, so the convolutions on both sides need no reorder
// (EfficientNet-B0 had two per SE block). Two fp32 inputs of one shape in one blocked layout (an
// INT8 ResNet's residual Add of two dequantized nhwc convolutions) add or multiply elementwise
// and keep that layout.
//
// The binary kernels' registration offers a blocked input where TakesBlockedChannelOperand says
// so, and their factory hands any node with a blocked input to CreateChannelBroadcast.
// Thread safety: free functions; the kernel runs on up to `threads` threads inside Run().
// Failure: the factory answers INVALID_ARGUMENT for a combination the predicate refuses.

#include <cstddef>
#include <memory>
#include <span>

#include "absl/status/statusor.h"
#include "engine/onnx/kernels/kernel.h"

namespace brigade::engine::onnx {

// Whether input `input` of an Add / Mul may stay blocked: one input is canonical nChw8c / nChw16c
// fp32 and the other an fp32 operand that broadcasts to it per channel (or is one value), plain or
// itself blocked with H = W = 1 (a convolution's [N, C, 1, 1] output), or both are fp32 of one
// shape in one blocked layout. Then both may.
bool TakesBlockedChannelOperand(const Node& node, size_t input,
                                std::span<const ValueInfo* const> inputs);

// The kernel for an Add (`multiply` false) or Mul with one such blocked input.
absl::StatusOr<std::unique_ptr<OpKernel>> CreateChannelBroadcast(KernelContext& ctx, bool multiply);

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_KERNELS_CHANNEL_BROADCAST_H_
