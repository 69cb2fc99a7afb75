#ifndef BRIGADE_ENGINE_ONNX_KERNELS_POST_OPS_H_
#define BRIGADE_ENGINE_ONNX_KERNELS_POST_OPS_H_

// Post-ops of the fused convolution and matmul nodes the passes create, and their translation
// into oneDNN post-ops (applied to the primitive's output in registers, no extra memory pass).
//
// On a node, post-ops are three parallel attribute lists, applied in order:
//   post_ops       "Relu" "LeakyRelu" "Clip" "Sigmoid" "HardSigmoid" "HardSwish" "Tanh" "Gelu"
//                  "Swish" (x·Sigmoid(x))
//                  "Linear" (alpha*x+beta), "Add" / "Mul" (with the node's next extra input)
//   post_op_alpha  the op's alpha (LeakyRelu slope, Clip min, HardSigmoid/Linear alpha)
//   post_op_beta   the op's beta (Clip max, HardSigmoid/Linear beta)
// and `post_op_input`, the index of the node input the first Add/Mul reads (later ones read the
// following inputs). Fusion passes append with AppendPostOp() below.
//
// Thread safety: free functions.

#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/onnx/ir/graph.h"
#include "engine/onnx/kernels/kernel.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace brigade::engine::onnx {

// Appends post-op `op` with its parameters to `fused`'s lists. For "Add"/"Mul" the caller has
// appended the extra input to `fused`'s inputs (and set post_op_input for the first one).
void AppendPostOp(Node* fused, std::string_view op, float alpha, float beta);

// Number of post-ops on `node`.
size_t PostOpCount(const Node& node);

// A binary post-op's extra input and the descriptor it is read through. When `current` (the
// input's layout now) differs from `desc`, the kernel must reorder it first (a full-size plain
// residual meeting a blocked output).
struct BinaryPostOpInput {
  size_t input = 0;
  int dnnl_arg = 0;  // DNNL_ARG_ATTR_MULTIPLE_POST_OP(k) | DNNL_ARG_SRC_1
  dnnl::memory::desc desc;
  dnnl::memory::desc current;
};

// Appends the oneDNN form of `ctx.node`'s post-ops to `ops`, for an output described by `dst`
// (plain or blocked). Binary post-op inputs must broadcast to the output; a full-size one is
// read in the output's layout.
//
// With `sum_input` given, the first full-size "Add" whose input already has `dst`'s layout and
// is offered in place (KernelContext::reusable_inputs) becomes a `sum` post-op instead: the
// primitive adds what its destination holds, so the caller must run with output 0 in that
// input's buffer (KernelContext::output_reuses_input = *sum_input). *sum_input is -1 otherwise.
// A `sum` reads one buffer less than a full-size binary post-op; oneDNN 2.6's 1×1 convolutions
// ran ~10% faster with it (ResNet-50's residual layers, nChw16c and nhwc alike).
absl::Status AppendNodePostOps(const KernelContext& ctx, const dnnl::memory::desc& dst,
                               dnnl::post_ops* ops, std::vector<BinaryPostOpInput>* binary_inputs,
                               int* sum_input = nullptr);

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_KERNELS_POST_OPS_H_
