// DynamicQuantMatMul (ai.brigade): one dynamically quantized Linear layer in one oneDNN pass,
// what DynamicQuantMatMulFusion (passes/dynamic_quant_matmul_fusion.h) makes of
// MatMulInteger → Cast → Mul(x_scale · w_scale) [→ Add(bias)]:
//
//   DynamicQuantMatMul(x_q, x_scale, x_zp, W, w_scale, [bias])
//     y[r, n] = x_scale · w_scale[n] · Σ_k (x_q[r, k] − x_zp) · W[k, n]  [+ bias[n]]
//
// x_q u8 [..., K] with run-time scalar x_scale (fp32) and x_zp (u8), from DynamicQuantizeLinear;
// W constant s8 [K, N] (zero point 0) packed once; w_scale constant, one value or N; bias
// constant fp32 [N]. The product accumulates in s32 on oneDNN's u8s8 matmul with w_scale as
// its (constant) output scales, the source zero point a run-time argument, then x_scale as a
// binary multiply by the one-element input itself and the bias as a binary add (post-ops apply
// after the scales, in order). Run-time output scales would be simpler, but oneDNN 2.6 answers
// them with its gemm:jit kernel on unpacked weights, 2× slower than brgemm here.
// The unfused nodes compute the s32 sum exactly and then one fp32 multiply per element, as
// oneDNN does, so the two agree to fp32 rounding.
//
// Thread safety: as OpKernel. Failure: INVALID_ARGUMENT naming the node for inputs that do not
// fit the form above (the pass only builds ones that do); the factory declines (UNIMPLEMENTED)
// where oneDNN's int8 products are not exact on this CPU (qlinear_dnnl.h), which the pass checks
// first.

#include <algorithm>
#include <memory>
#include <vector>

#include "core/status_macros.h"
#include "engine/onnx/kernels/dnnl_util.h"
#include "engine/onnx/kernels/kernel_util.h"
#include "engine/onnx/kernels/packed_weights.h"
#include "engine/onnx/kernels/qlinear_dnnl.h"
#include "engine/onnx/kernels/registry.h"

namespace brigade::engine::onnx {
namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

class DynamicQuantMatMulKernel final : public OpKernel {
 public:
  DynamicQuantMatMulKernel(DnnlCall call, int src_slot, int x_scale_slot, int dst_slot,
                           int scratchpad, size_t scratchpad_offset,
                           std::unique_ptr<int32_t> zero_point,
                           std::vector<std::shared_ptr<const Tensor>> keep)
      : call_(std::move(call)),
        src_slot_(src_slot),
        x_scale_slot_(x_scale_slot),
        dst_slot_(dst_slot),
        scratchpad_(scratchpad),
        scratchpad_offset_(scratchpad_offset),
        zero_point_(std::move(zero_point)),
        keep_(std::move(keep)) {}

  absl::Status Run(const RunContext& ctx) override {
    *zero_point_ = *ctx.in<uint8_t>(2);
    call_.SetHandle(src_slot_, ctx.inputs[0]);
    call_.SetHandle(x_scale_slot_, ctx.inputs[1]);
    call_.SetHandle(dst_slot_, ctx.outputs[0]);
    if (scratchpad_ >= 0) call_.SetHandle(scratchpad_, ctx.scratch + scratchpad_offset_);
    return call_.Execute(*ctx.stream);
  }

 private:
  DnnlCall call_;
  const int src_slot_, x_scale_slot_, dst_slot_, scratchpad_;
  const size_t scratchpad_offset_;
  // Bound to the primitive as its run-time source zero point (the u8 input widened).
  const std::unique_ptr<int32_t> zero_point_;
  const std::vector<std::shared_ptr<const Tensor>> keep_;  // packed weights, bias
};

absl::StatusOr<std::unique_ptr<OpKernel>> CreateDynamicQuantMatMul(KernelContext& ctx) {
  if (ctx.num_inputs() < 5) return ctx.Error("needs x_q, x_scale, x_zero_point, W, w_scale");
  const ValueInfo& x = ctx.input(0);
  const ValueInfo& w = ctx.input(3);
  if (x.dtype != DataType::kUint8 || x.layout.blocked || x.shape.size() < 2) {
    return ctx.Error("x_q must be plain uint8 of rank >= 2");
  }
  if (ctx.input(1).dtype != DataType::kFp32 || ctx.input(1).num_elements() != 1 ||
      ctx.input(2).dtype != DataType::kUint8 || ctx.input(2).num_elements() != 1) {
    return ctx.Error("x_scale must be one fp32, x_zero_point one uint8");
  }
  if (w.dtype != DataType::kInt8 || w.constant == nullptr || w.shape.size() != 2 ||
      w.shape[0] != x.shape.back()) {
    return ctx.Error("W must be a constant int8 [", x.shape.back(), ", N]");
  }
  const int64_t k = w.shape[0], n = w.shape[1];
  const ValueInfo& w_scale = ctx.input(4);
  if (w_scale.constant == nullptr || w_scale.dtype != DataType::kFp32 ||
      (w_scale.num_elements() != 1 && w_scale.num_elements() != n)) {
    return ctx.Error("w_scale must be a constant fp32 of 1 or ", n, " values");
  }
  const bool has_bias = ctx.has_input(5);
  if (has_bias && (ctx.input(5).constant == nullptr || ctx.input(5).dtype != DataType::kFp32 ||
                   ctx.input(5).num_elements() != n)) {
    return ctx.Error("bias must be a constant fp32 [", n, "]");
  }
  Shape out(x.shape.begin(), x.shape.end() - 1);
  out.push_back(n);
  ctx.SetOutput(0, DataType::kFp32, out);
  if (ctx.shape_only) return std::unique_ptr<OpKernel>();
  if (!DnnlInt8IsExactFor(DataType::kUint8, *w.constant)) {
    return ctx.Unsupported("oneDNN's int8 products are not exact on this CPU for these weights");
  }

  const int64_t rows = DimProduct(x.shape, 0, x.shape.size() - 1);
  const dnnl::memory::desc src_desc = PlainDesc(Shape{rows, k}, dt::u8);
  const dnnl::memory::desc w_plain = PlainDesc(Shape{k, n}, dt::s8);
  const dnnl::memory::desc w_any(ToDnnlDims(Shape{k, n}), dt::s8, tag::any);
  const dnnl::memory::desc dst_desc = PlainDesc(Shape{rows, n}, dt::f32);
  const dnnl::memory::desc bias_desc = PlainDesc(Shape{1, n}, dt::f32);
  const dnnl::memory::desc x_scale_desc = PlainDesc(Shape{1, 1}, dt::f32);
  std::vector<float> w_scales(static_cast<size_t>(w_scale.num_elements()));
  std::copy_n(w_scale.constant->values<float>().begin(), w_scales.size(), w_scales.begin());
  dnnl::primitive_attr attr = UserScratchpadAttr();
  attr.set_output_scales(w_scales.size() > 1 ? 1 << 1 : 0, w_scales);
  attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
  dnnl::post_ops ops;
  ops.append_binary(dnnl::algorithm::binary_mul, x_scale_desc);
  if (has_bias) ops.append_binary(dnnl::algorithm::binary_add, bias_desc);
  attr.set_post_ops(ops);
  dnnl::matmul::primitive_desc pd;
  DnnlCall call;
  BRIGADE_RETURN_IF_ERROR(CatchDnnl(ctx, "int8 matmul", [&] {
    pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(src_desc, w_any, dst_desc), attr,
                                      *ctx.engine);
    call.set_primitive(dnnl::matmul(pd));
  }));
  const int src_slot = call.AddArg(DNNL_ARG_SRC, src_desc, *ctx.engine);
  const dnnl::memory::desc packed_desc = pd.weights_desc();
  BRIGADE_ASSIGN_OR_RETURN(
      std::shared_ptr<const Tensor> packed,
      PackConstant(ctx, StrCat(ctx.node->name, "/W8"), w_plain, w.constant->data(), packed_desc));
  call.AddArg(DNNL_ARG_WEIGHTS, packed_desc, *ctx.engine, packed->data());
  const int dst_slot = call.AddArg(DNNL_ARG_DST, dst_desc, *ctx.engine);
  std::vector<std::shared_ptr<const Tensor>> keep{packed};
  const int x_scale_slot =
      call.AddArg(DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, x_scale_desc, *ctx.engine);
  if (has_bias) {
    auto bias = std::make_shared<const Tensor>(*ctx.input(5).constant);
    call.AddArg(DNNL_ARG_ATTR_MULTIPLE_POST_OP(1) | DNNL_ARG_SRC_1, bias_desc, *ctx.engine,
                bias->data());
    keep.push_back(std::move(bias));
  }
  auto zero_point = std::make_unique<int32_t>(0);
  call.AddArg(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, PlainDesc(Shape{1}, dt::s32), *ctx.engine,
              zero_point.get());
  size_t scratchpad_offset = 0;
  const int scratchpad = AddScratchpad(pd, ctx, call, &scratchpad_offset);
  return std::make_unique<DynamicQuantMatMulKernel>(std::move(call), src_slot, x_scale_slot,
                                                    dst_slot, scratchpad, scratchpad_offset,
                                                    std::move(zero_point), std::move(keep));
}

}  // namespace

void RegisterDynamicQuantMatMulKernel(KernelRegistry* registry) {
  KernelDef def;
  def.domain = std::string(kBrigadeDomain);
  def.op_type = "DynamicQuantMatMul";
  def.create = &CreateDynamicQuantMatMul;
  registry->Add(std::move(def));
}

}  // namespace brigade::engine::onnx
