#include "engine/onnx/kernels/qlinear_dnnl.h"

#include <optional>
#include <vector>

#include "core/status_macros.h"
#include "engine/onnx/kernels/conv_geometry.h"
#include "engine/onnx/kernels/dnnl_util.h"
#include "engine/onnx/kernels/kernel_util.h"
#include "engine/onnx/kernels/packed_weights.h"
#include "engine/onnx/kernels/post_ops.h"

namespace brigade::engine::onnx {
namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

bool Is8Bit(DataType t) { return t == DataType::kUint8 || t == DataType::kInt8; }

// The single value of a one-element constant, as double.
std::optional<double> Scalar(const KernelContext& ctx, size_t input) {
  if (!ctx.has_input(input) || ctx.input(input).constant == nullptr ||
      ctx.input(input).num_elements() != 1) {
    return std::nullopt;
  }
  auto v = ConstantScalar(ctx, input);
  if (!v.ok()) return std::nullopt;
  return *v;
}

// Per-channel (or single) float scales of a constant input with `count` or 1 elements.
std::optional<std::vector<float>> Scales(const KernelContext& ctx, size_t input, int64_t count) {
  if (!ctx.has_input(input) || ctx.input(input).constant == nullptr) return std::nullopt;
  const int64_t n = ctx.input(input).num_elements();
  if (n != 1 && n != count) return std::nullopt;
  auto v = ConstantFloats(ctx, input);
  if (!v.ok()) return std::nullopt;
  return *v;
}

// Constant 8-bit weights as s8: s8 with zero point 0 as is, u8 with zero point 128 shifted.
// `zp_info` is null when the node has no weight zero point.
std::optional<Tensor> SignedWeights(const ValueInfo& w, const ValueInfo* zp_info) {
  if (w.constant == nullptr || !Is8Bit(w.dtype)) return std::nullopt;
  int expected = w.dtype == DataType::kInt8 ? 0 : 128;
  if (zp_info != nullptr) {
    const ValueInfo& zp = *zp_info;
    if (zp.constant == nullptr || zp.dtype != w.dtype) return std::nullopt;
    for (int64_t i = 0; i < zp.num_elements(); ++i) {
      const int v = w.dtype == DataType::kInt8 ? zp.constant->values<int8_t>()[i]
                                               : zp.constant->values<uint8_t>()[i];
      if (v != expected) return std::nullopt;
    }
  } else if (w.dtype == DataType::kUint8) {
    return std::nullopt;  // u8 weights with zero point 0 do not fit s8
  }
  if (w.dtype == DataType::kInt8) return *w.constant;
  auto shifted = Tensor::Allocate(DataType::kInt8, w.shape);
  if (!shifted.ok()) return std::nullopt;
  const auto src = w.constant->values<uint8_t>();
  auto dst = shifted->mutable_values<int8_t>();
  for (size_t i = 0; i < src.size(); ++i) dst[i] = static_cast<int8_t>(src[i] - 128);
  return *std::move(shifted);
}

std::optional<Tensor> SignedWeights(const KernelContext& ctx, size_t w_input, size_t zp_input) {
  return SignedWeights(ctx.input(w_input),
                       ctx.has_input(zp_input) ? &ctx.input(zp_input) : nullptr);
}

// Output scales x_scale · w_scale[c] / y_scale.
std::vector<float> OutputScales(double x_scale, const std::vector<float>& w_scale, double y_scale) {
  std::vector<float> out;
  out.reserve(w_scale.size());
  for (float w : w_scale) out.push_back(static_cast<float>(x_scale * w / y_scale));
  return out;
}

// Output scales and zero points. oneDNN's int8 convolutions take zero points only at run time,
// so they are declared runtime here and bound by AddZeroPoints().
dnnl::primitive_attr QuantAttr(const std::vector<float>& scales, int per_channel_mask,
                               int32_t src_zp, int32_t dst_zp) {
  dnnl::primitive_attr attr = UserScratchpadAttr();
  attr.set_output_scales(scales.size() > 1 ? per_channel_mask : 0, scales);
  if (src_zp != 0) attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
  if (dst_zp != 0) attr.set_zero_points(DNNL_ARG_DST, 0, {DNNL_RUNTIME_S32_VAL});
  return attr;
}

// Binds the run-time zero points of QuantAttr() as constant one-element s32 buffers.
void AddZeroPoints(const KernelContext& ctx, DnnlCall& call, int32_t src_zp, int32_t dst_zp,
                   std::vector<std::shared_ptr<const Tensor>>* keep) {
  const dnnl::memory::desc one = PlainDesc(Shape{1}, dnnl::memory::data_type::s32);
  for (const auto& [arg, zp] : {std::pair{DNNL_ARG_SRC, src_zp}, std::pair{DNNL_ARG_DST, dst_zp}}) {
    if (zp == 0) continue;
    auto t = std::make_shared<const Tensor>(
        *Tensor::FromValues<int32_t>(Shape{1}, std::vector<int32_t>{zp}));
    call.AddArg(DNNL_ARG_ATTR_ZERO_POINTS | arg, one, *ctx.engine, t->data());
    keep->push_back(std::move(t));
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<OpKernel>> TryDnnlMatMulInteger(KernelContext& ctx) {
  const ValueInfo& a = ctx.input(0);
  const ValueInfo& b = ctx.input(1);
  if (!Is8Bit(a.dtype) || a.shape.size() < 2 || b.shape.size() != 2 || a.layout.blocked ||
      a.shape.back() != b.shape[0]) {
    return std::unique_ptr<OpKernel>();
  }
  std::optional<Tensor> weights = SignedWeights(ctx, 1, 3);
  if (!weights || !DnnlInt8IsExactFor(a.dtype, *weights)) return std::unique_ptr<OpKernel>();
  // A's zero point: absent (0), a constant, or a one-element run-time value.
  const bool has_zp = ctx.has_input(2);
  if (has_zp && (ctx.input(2).num_elements() != 1 || ctx.input(2).dtype != a.dtype)) {
    return std::unique_ptr<OpKernel>();
  }
  const std::optional<double> constant_zp = has_zp ? Scalar(ctx, 2) : std::optional<double>(0);
  const int64_t k = b.shape[0], n = b.shape[1];
  const int64_t rows = DimProduct(a.shape, 0, a.shape.size() - 1);
  Shape out(a.shape.begin(), a.shape.end() - 1);
  out.push_back(n);
  ctx.SetOutput(0, DataType::kInt32, out);
  if (ctx.shape_only) return std::unique_ptr<OpKernel>();

  const dnnl::memory::desc a_desc = PlainDesc(Shape{rows, k}, *ToDnnlType(a.dtype));
  const dnnl::memory::desc b_plain = PlainDesc(Shape{k, n}, dt::s8);
  const dnnl::memory::desc b_any(ToDnnlDims(Shape{k, n}), dt::s8, tag::any);
  const dnnl::memory::desc dst_desc = PlainDesc(Shape{rows, n}, dt::s32);
  const bool runtime_zp = has_zp && !constant_zp.has_value();
  const auto zp = static_cast<int32_t>(constant_zp.value_or(0));
  dnnl::primitive_attr attr = UserScratchpadAttr();
  if (runtime_zp || zp != 0) attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
  dnnl::matmul::primitive_desc pd;
  DnnlCall call;
  const absl::Status created = CatchDnnl(ctx, "int8 matmul", [&] {
    pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(a_desc, b_any, dst_desc), attr,
                                      *ctx.engine);
    call.set_primitive(dnnl::matmul(pd));
  });
  if (!created.ok()) return std::unique_ptr<OpKernel>();
  std::vector<DnnlKernel::Binding> bindings;
  bindings.push_back({call.AddArg(DNNL_ARG_SRC, a_desc, *ctx.engine), 0});
  BRIGADE_ASSIGN_OR_RETURN(std::shared_ptr<const Tensor> packed,
                           PackConstant(ctx, StrCat(ctx.node->name, "/B8"), b_plain,
                                        weights->data(), pd.weights_desc()));
  call.AddArg(DNNL_ARG_WEIGHTS, pd.weights_desc(), *ctx.engine, packed->data());
  const int dst_slot = call.AddArg(DNNL_ARG_DST, dst_desc, *ctx.engine);
  std::vector<std::shared_ptr<const Tensor>> keep{packed};
  std::vector<ScratchReorder> reorders;
  if (runtime_zp) {
    // The 8-bit zero point widened to the s32 oneDNN reads, by a reorder into scratch per run.
    const dnnl::memory::desc zp_s32 = PlainDesc(Shape{1}, dt::s32);
    const int zp_slot = call.AddArg(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, zp_s32, *ctx.engine);
    BRIGADE_ASSIGN_OR_RETURN(
        ScratchReorder r,
        MakeScratchReorder(ctx, 2, PlainDesc(Shape{1}, *ToDnnlType(a.dtype)), zp_s32));
    r.target_slot = zp_slot;
    reorders.push_back(std::move(r));
  } else {
    AddZeroPoints(ctx, call, zp, 0, &keep);
  }
  size_t scratchpad_offset = 0;
  const int scratchpad = AddScratchpad(pd, ctx, call, &scratchpad_offset);
  return std::make_unique<DnnlKernel>(std::move(call), std::move(bindings), std::move(reorders),
                                      dst_slot, scratchpad, scratchpad_offset, std::move(keep));
}

bool DnnlInt8IsExact() {
  static const bool exact = [] {
    const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
    auto has = [isa](dnnl_cpu_isa_t wanted) {
      return (isa & static_cast<unsigned>(wanted)) == static_cast<unsigned>(wanted);
    };
    return has(dnnl_cpu_isa_avx512_core_vnni) || has(dnnl_cpu_isa_avx2_vnni);
  }();
  return exact;
}

bool WeightsFitSevenBits(const Tensor& weights) {
  if (weights.dtype() != DataType::kInt8) return false;
  for (int8_t v : weights.values<int8_t>()) {
    if (v < -64 || v > 64) return false;
  }
  return true;
}

bool DnnlInt8IsExactFor(DataType x_type, const Tensor& signed_weights) {
  return DnnlInt8IsExact() || (x_type == DataType::kUint8 && WeightsFitSevenBits(signed_weights));
}

bool TakesBlockedQLinearConv(const Node& node, size_t input,
                             std::span<const ValueInfo* const> inputs) {
  if (input != 0 || inputs.size() < 8) return false;
  for (size_t i : {0, 1, 2, 3, 4, 6, 7}) {
    if (inputs[i] == nullptr) return false;
  }
  const ValueInfo& x = *inputs[0];
  const ValueInfo& w = *inputs[3];
  if (!Is8Bit(x.dtype) || !Is8Bit(inputs[7]->dtype) || !Is8Bit(w.dtype) || w.constant == nullptr ||
      w.shape.size() != x.shape.size() || x.shape.size() < 3) {
    return false;
  }
  for (size_t i : {1, 2, 6, 7}) {
    if (inputs[i]->constant == nullptr || inputs[i]->num_elements() != 1) return false;
  }
  const int64_t group = node.attributes.GetInt("group", 1);
  if (group <= 0 || w.shape[0] % group != 0 || w.shape[1] * group != x.shape[1]) return false;
  const std::optional<Tensor> weights = SignedWeights(w, inputs.size() > 5 ? inputs[5] : nullptr);
  return weights.has_value() && DnnlInt8IsExactFor(x.dtype, *weights);
}

absl::StatusOr<std::unique_ptr<OpKernel>> TryDnnlQLinearConv(KernelContext& ctx) {
  if (ctx.num_inputs() < 8) return std::unique_ptr<OpKernel>();
  const ValueInfo& x = ctx.input(0);
  const ValueInfo& w = ctx.input(3);
  if (!Is8Bit(x.dtype) || x.shape.size() < 3 || x.shape.size() > 5 ||
      w.shape.size() != x.shape.size() || !ctx.has_input(7) || !Is8Bit(ctx.input(7).dtype)) {
    return std::unique_ptr<OpKernel>();
  }
  const int64_t group = ctx.node->attributes.GetInt("group", 1);
  const int64_t m = w.shape[0];
  if (group <= 0 || m % group != 0 || w.shape[1] * group != x.shape[1]) {
    return std::unique_ptr<OpKernel>();
  }
  const auto x_scale = Scalar(ctx, 1), x_zp = Scalar(ctx, 2), y_scale = Scalar(ctx, 6),
             y_zp = Scalar(ctx, 7);
  const auto w_scale = Scales(ctx, 4, m);
  std::optional<Tensor> weights = SignedWeights(ctx, 3, 5);
  if (!x_scale || !x_zp || !y_scale || !y_zp || !w_scale || !weights || *y_scale == 0 ||
      !DnnlInt8IsExactFor(x.dtype, *weights)) {
    return std::unique_ptr<OpKernel>();
  }
  const bool has_bias = ctx.has_input(8);
  if (has_bias && (ctx.input(8).constant == nullptr || ctx.input(8).dtype != DataType::kInt32 ||
                   ctx.input(8).num_elements() != m)) {
    return std::unique_ptr<OpKernel>();
  }
  BRIGADE_ASSIGN_OR_RETURN(
      ConvGeometry g,
      ForwardGeometry(ctx, x.shape, std::vector<int64_t>(w.shape.begin() + 2, w.shape.end()),
                      false));
  Shape out{x.shape[0], m};
  out.insert(out.end(), g.output.begin(), g.output.end());
  const DataType y_type = ctx.input(7).dtype;
  ctx.SetOutput(0, y_type, out);
  if (ctx.shape_only) return std::unique_ptr<OpKernel>();

  const auto x_dt = *ToDnnlType(x.dtype);
  const auto y_dt = *ToDnnlType(y_type);
  Shape kernel(w.shape.begin() + 2, w.shape.end());
  Shape w_dims = group > 1 ? Shape{group, m / group, w.shape[1]} : Shape{m, w.shape[1]};
  w_dims.insert(w_dims.end(), kernel.begin(), kernel.end());
  const dnnl::memory::desc w_plain = PlainDesc(w_dims, dt::s8);
  const dnnl::memory::desc w_any(ToDnnlDims(w_dims), dt::s8, tag::any);
  const dnnl::memory::desc src_any(ToDnnlDims(x.shape), x_dt, tag::any);
  const dnnl::memory::desc dst_any(ToDnnlDims(out), y_dt, tag::any);
  const dnnl::memory::desc bias_desc =
      has_bias ? PlainDesc(Shape{m}, dt::s32) : dnnl::memory::desc();
  dnnl::memory::dims strides(g.strides.begin(), g.strides.end());
  dnnl::memory::dims pad_l(g.pad_begin.begin(), g.pad_begin.end()),
      pad_r(g.pad_end.begin(), g.pad_end.end()), dilates;
  for (int64_t d : g.dilations) dilates.push_back(d - 1);

  const std::vector<float> scales = OutputScales(*x_scale, *w_scale, *y_scale);
  dnnl::primitive_attr attr =
      QuantAttr(scales, 1 << 1, static_cast<int32_t>(*x_zp), static_cast<int32_t>(*y_zp));
  dnnl::post_ops ops;
  std::vector<BinaryPostOpInput> binary;
  BRIGADE_RETURN_IF_ERROR(AppendNodePostOps(ctx, dst_any, &ops, &binary));
  if (!binary.empty()) return ctx.Unsupported("binary post-ops on int8 convolutions");
  attr.set_post_ops(ops);

  dnnl::convolution_forward::primitive_desc pd;
  DnnlCall call;
  const dnnl::memory::desc& src_md = x.layout.blocked ? x.layout.desc : src_any;
  const absl::Status created = CatchDnnl(ctx, "int8 convolution", [&] {
    pd = dnnl::convolution_forward::primitive_desc(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                        dnnl::algorithm::convolution_direct, src_md, w_any,
                                        bias_desc, dst_any, strides, dilates, pad_l, pad_r),
        attr, *ctx.engine);
    call.set_primitive(dnnl::convolution_forward(pd));
  });
  if (!created.ok()) return std::unique_ptr<OpKernel>();  // the integer loop handles it

  std::vector<DnnlKernel::Binding> bindings;
  std::vector<ScratchReorder> reorders;
  const dnnl::memory::desc src_now = x.layout.blocked ? x.layout.desc : PlainDesc(x.shape, x_dt);
  const int src_slot = call.AddArg(DNNL_ARG_SRC, pd.src_desc(), *ctx.engine);
  if (src_now == pd.src_desc()) {
    bindings.push_back({src_slot, 0});
  } else {
    BRIGADE_ASSIGN_OR_RETURN(ScratchReorder r, MakeScratchReorder(ctx, 0, src_now, pd.src_desc()));
    r.target_slot = src_slot;
    reorders.push_back(std::move(r));
  }
  BRIGADE_ASSIGN_OR_RETURN(std::shared_ptr<const Tensor> packed,
                           PackConstant(ctx, StrCat(ctx.node->name, "/W8"), w_plain,
                                        weights->data(), pd.weights_desc()));
  call.AddArg(DNNL_ARG_WEIGHTS, pd.weights_desc(), *ctx.engine, packed->data());
  if (has_bias) call.AddArg(DNNL_ARG_BIAS, bias_desc, *ctx.engine, ctx.input(8).constant->data());
  const int dst_slot = call.AddArg(DNNL_ARG_DST, pd.dst_desc(), *ctx.engine);
  size_t scratchpad_offset = 0;
  const int scratchpad = AddScratchpad(pd, ctx, call, &scratchpad_offset);
  if (pd.dst_desc() != PlainDesc(out, y_dt)) ctx.outputs[0].layout = Layout{true, pd.dst_desc()};
  std::vector<std::shared_ptr<const Tensor>> keep{packed};
  if (has_bias) keep.push_back(std::make_shared<const Tensor>(*ctx.input(8).constant));
  AddZeroPoints(ctx, call, static_cast<int32_t>(*x_zp), static_cast<int32_t>(*y_zp), &keep);
  return std::make_unique<DnnlKernel>(std::move(call), std::move(bindings), std::move(reorders),
                                      dst_slot, scratchpad, scratchpad_offset, std::move(keep));
}

absl::StatusOr<std::unique_ptr<OpKernel>> TryDnnlQLinearMatMul(KernelContext& ctx) {
  if (ctx.num_inputs() < 8) return std::unique_ptr<OpKernel>();
  const ValueInfo& a = ctx.input(0);
  const ValueInfo& b = ctx.input(3);
  if (!Is8Bit(a.dtype) || a.shape.size() < 2 || b.shape.size() != 2 || a.layout.blocked ||
      a.shape.back() != b.shape[0] || !Is8Bit(ctx.input(7).dtype)) {
    return std::unique_ptr<OpKernel>();
  }
  const int64_t k = b.shape[0], n = b.shape[1];
  const int64_t rows = DimProduct(a.shape, 0, a.shape.size() - 1);
  const auto a_scale = Scalar(ctx, 1), a_zp = Scalar(ctx, 2), y_scale = Scalar(ctx, 6),
             y_zp = Scalar(ctx, 7);
  const auto b_scale = Scales(ctx, 4, n);
  std::optional<Tensor> weights = SignedWeights(ctx, 3, 5);
  if (!a_scale || !a_zp || !y_scale || !y_zp || !b_scale || !weights || *y_scale == 0 ||
      !DnnlInt8IsExactFor(a.dtype, *weights)) {
    return std::unique_ptr<OpKernel>();
  }
  // An optional int32 bias (from QDQ fusion) follows at input 8.
  const bool has_bias = ctx.has_input(8);
  if (has_bias && (ctx.input(8).constant == nullptr || ctx.input(8).dtype != DataType::kInt32 ||
                   ctx.input(8).num_elements() != n)) {
    return std::unique_ptr<OpKernel>();
  }
  Shape out(a.shape.begin(), a.shape.end() - 1);
  out.push_back(n);
  const DataType y_type = ctx.input(7).dtype;
  ctx.SetOutput(0, y_type, out);
  if (ctx.shape_only) return std::unique_ptr<OpKernel>();

  const dnnl::memory::desc a_desc = PlainDesc(Shape{rows, k}, *ToDnnlType(a.dtype));
  const dnnl::memory::desc b_plain = PlainDesc(Shape{k, n}, dt::s8);
  const dnnl::memory::desc b_any(ToDnnlDims(Shape{k, n}), dt::s8, tag::any);
  const dnnl::memory::desc dst_desc = PlainDesc(Shape{rows, n}, *ToDnnlType(y_type));
  const dnnl::memory::desc bias_desc =
      has_bias ? PlainDesc(Shape{1, n}, dt::s32) : dnnl::memory::desc();
  const std::vector<float> scales = OutputScales(*a_scale, *b_scale, *y_scale);
  dnnl::primitive_attr attr =
      QuantAttr(scales, 1 << 1, static_cast<int32_t>(*a_zp), static_cast<int32_t>(*y_zp));
  dnnl::post_ops ops;
  std::vector<BinaryPostOpInput> binary;
  BRIGADE_RETURN_IF_ERROR(AppendNodePostOps(ctx, dst_desc, &ops, &binary));
  if (!binary.empty()) return ctx.Unsupported("binary post-ops on int8 matmuls");
  attr.set_post_ops(ops);
  dnnl::matmul::primitive_desc pd;
  DnnlCall call;
  const absl::Status created = CatchDnnl(ctx, "int8 matmul", [&] {
    pd = has_bias ? dnnl::matmul::primitive_desc(
                        dnnl::matmul::desc(a_desc, b_any, bias_desc, dst_desc), attr, *ctx.engine)
                  : dnnl::matmul::primitive_desc(dnnl::matmul::desc(a_desc, b_any, dst_desc), attr,
                                                 *ctx.engine);
    call.set_primitive(dnnl::matmul(pd));
  });
  if (!created.ok()) return std::unique_ptr<OpKernel>();
  std::vector<DnnlKernel::Binding> bindings;
  bindings.push_back({call.AddArg(DNNL_ARG_SRC, a_desc, *ctx.engine), 0});
  BRIGADE_ASSIGN_OR_RETURN(std::shared_ptr<const Tensor> packed,
                           PackConstant(ctx, StrCat(ctx.node->name, "/B8"), b_plain,
                                        weights->data(), pd.weights_desc()));
  call.AddArg(DNNL_ARG_WEIGHTS, pd.weights_desc(), *ctx.engine, packed->data());
  if (has_bias) call.AddArg(DNNL_ARG_BIAS, bias_desc, *ctx.engine, ctx.input(8).constant->data());
  const int dst_slot = call.AddArg(DNNL_ARG_DST, dst_desc, *ctx.engine);
  size_t scratchpad_offset = 0;
  const int scratchpad = AddScratchpad(pd, ctx, call, &scratchpad_offset);
  std::vector<std::shared_ptr<const Tensor>> keep{packed};
  if (has_bias) keep.push_back(std::make_shared<const Tensor>(*ctx.input(8).constant));
  AddZeroPoints(ctx, call, static_cast<int32_t>(*a_zp), static_cast<int32_t>(*y_zp), &keep);
  return std::make_unique<DnnlKernel>(std::move(call), std::move(bindings),
                                      std::vector<ScratchReorder>{}, dst_slot, scratchpad,
                                      scratchpad_offset, std::move(keep));
}

}  // namespace brigade::engine::onnx
