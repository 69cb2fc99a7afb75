// Conv, ConvTranspose and the fused ai.brigade.FusedConv on oneDNN's convolution and
// deconvolution primitives (fp32; convolutions also in bf16, see kernel.h's ComputePrecision).
//
// FusedConv(X, W, [B], [post-op inputs...]) is a Conv whose output runs through post-ops (see
// post_ops.h): bias, activation and the residual Add happen in the convolution's registers.
// When the planner offers the residual's buffer (this is its last reader, same layout as the
// output), the output is written over it and the Add is oneDNN's `sum` post-op (ResNet-50's
// residual 1×1s ran ~10% faster than with a binary post-op, which also reads a second buffer);
// otherwise the residual is a binary post-op input.
//
// Layouts: 2-D convolutions write nChw16c (see WantsChannelBlocked); otherwise the primitive
// chooses its preferred (blocked) source, weights and destination layouts. The output is handed to
// the planner in the primitive's layout, so the next convolution-family op reads it without a
// reorder; an input arriving in another layout is reordered inside Run into scratch. Constant
// weights are packed once into the primitive's layout and shared through PackedWeights.

#include <memory>
#include <string_view>
#include <vector>

#include "core/status_macros.h"
#include "engine/onnx/kernels/conv_geometry.h"
#include "engine/onnx/kernels/dnnl_util.h"
#include "engine/onnx/kernels/kernel_util.h"
#include "engine/onnx/kernels/packed_weights.h"
#include "engine/onnx/kernels/post_ops.h"
#include "engine/onnx/kernels/registry.h"

namespace brigade::engine::onnx {
namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

// Plain descriptor of ONNX weights for the primitive: Conv W [M, C/g, k...] as (g)oihw;
// ConvTranspose W [C, M/g, k...] read as (g)oihw through strides (it is (g)iohw in memory).
dnnl::memory::desc OnnxWeightsDesc(const Shape& w, int64_t group, bool transposed) {
  const size_t spatial = w.size() - 2;
  Shape kernel(w.begin() + 2, w.end());
  const int64_t kernel_size = DimProduct(kernel, 0, kernel.size());
  Shape dims, strides;
  if (!transposed) {
    const int64_t m = w[0], c = w[1];
    if (group > 1) {
      dims = {group, m / group, c};
    } else {
      dims = {m, c};
    }
    dims.insert(dims.end(), kernel.begin(), kernel.end());
    return PlainDesc(dims, dt::f32);
  }
  // Memory: [C][M/g][k...] with C = g * C/g. Logical (g, o, i, k...).
  const int64_t c = w[0], m_per_group = w[1];
  const int64_t c_per_group = c / group;
  Shape kernel_strides = Strides(kernel);
  if (group > 1) {
    dims = {group, m_per_group, c_per_group};
    strides = {c_per_group * m_per_group * kernel_size, kernel_size, m_per_group * kernel_size};
  } else {
    dims = {m_per_group, c};
    strides = {kernel_size, m_per_group * kernel_size};
  }
  (void)spatial;
  dims.insert(dims.end(), kernel.begin(), kernel.end());
  strides.insert(strides.end(), kernel_strides.begin(), kernel_strides.end());
  return dnnl::memory::desc(ToDnnlDims(dims), dt::f32,
                            dnnl::memory::dims(strides.begin(), strides.end()));
}

dnnl::memory::desc AnyWeightsDesc(const dnnl::memory::desc& plain, dt type) {
  return dnnl::memory::desc(plain.dims(), type, tag::any);
}

// Output layout policy. Asked for `any`, oneDNN 2.6 gives fp32 2-D convolutions nhwc and its
// brgemm kernels; its nChw16c kernels (jit_1x1, jit, jit_dw) measured faster on this machine's
// AVX-512: ResNet-50 ~5% and MobileNetV2 4–20% at batch 8 end to end, batch 1 about even (see
// bench/results/onnx.md, 2026-11-30). So a plain or depthwise 2-D convolution with at least 16
// output channels (fewer would be mostly padding) whose input is plain or already nChw16c asks
// for nChw16c; an input in another blocked layout keeps oneDNN's choice (no mixed-layout kernel).
dnnl::memory::desc ChannelBlockedDesc(const Shape& shape) {
  return dnnl::memory::desc(ToDnnlDims(shape), dt::f32, tag::aBcd16b);
}

bool WantsChannelBlocked(const ValueInfo& x, int64_t out_channels, int64_t group) {
  if (x.shape.size() != 4 || out_channels < 16) return false;
  if (group != 1 && !(group == x.shape[1] && group == out_channels)) return false;
  return !x.layout.blocked || x.layout.desc == ChannelBlockedDesc(x.shape);
}

// How good an implementation oneDNN picked: 0 its reference loops, 1 its im2col + GEMM fallback
// ("gemm:jit", "x64:gemm:jit"; plain layouts only, 4–7× slower than the direct kernels on
// RegNet's grouped 3×3s), 2 a direct or brgemm kernel.
int ImplRank(const dnnl::primitive_desc& pd) {
  const std::string_view impl = pd.impl_info_str();
  if (impl.starts_with("ref")) return 0;
  if (impl.starts_with("gemm") || impl.find(":gemm") != std::string_view::npos) return 1;
  return 2;
}

bool IsOptimizedImpl(const dnnl::primitive_desc& pd) { return ImplRank(pd) == 2; }

absl::StatusOr<std::unique_ptr<OpKernel>> BuildConv(KernelContext& ctx, bool transposed) {
  const ValueInfo& x = ctx.input(0);
  const ValueInfo& w = ctx.input(1);
  if (x.dtype != DataType::kFp32 || w.dtype != DataType::kFp32) {
    return ctx.Unsupported("element type ", DataTypeName(x.dtype), " (fp32 only)");
  }
  if (x.shape.size() < 3 || x.shape.size() > 5 || w.shape.size() != x.shape.size()) {
    return ctx.Unsupported("Conv of rank ", x.shape.size(), " with weights ",
                           ShapeToString(w.shape));
  }
  const int64_t group = ctx.node->attributes.GetInt("group", 1);
  const int64_t channels = x.shape[1];
  if (group <= 0 || channels % group != 0) return ctx.Error("group ", group, " invalid");
  std::vector<int64_t> kernel(w.shape.begin() + 2, w.shape.end());
  const auto kernel_attr = ctx.node->attributes.GetInts("kernel_shape");
  if (!kernel_attr.empty() &&
      std::vector<int64_t>(kernel_attr.begin(), kernel_attr.end()) != kernel) {
    return ctx.Error("kernel_shape does not match the weights");
  }
  int64_t out_channels = 0;
  ConvGeometry g;
  if (!transposed) {
    if (w.shape[1] * group != channels) {
      return ctx.Error("weights ", ShapeToString(w.shape), " expect ", w.shape[1] * group,
                       " input channels, input has ", channels);
    }
    out_channels = w.shape[0];
    if (out_channels % group != 0) return ctx.Error("output channels not divisible by group");
    BRIGADE_ASSIGN_OR_RETURN(g, ForwardGeometry(ctx, x.shape, kernel, false));
  } else {
    if (w.shape[0] != channels) {
      return ctx.Error("weights ", ShapeToString(w.shape), " expect ", w.shape[0],
                       " input channels, input has ", channels);
    }
    out_channels = w.shape[1] * group;
    BRIGADE_ASSIGN_OR_RETURN(g, TransposedGeometry(ctx, x.shape, kernel));
  }
  Shape out_shape{x.shape[0], out_channels};
  out_shape.insert(out_shape.end(), g.output.begin(), g.output.end());
  const bool has_bias = ctx.has_input(2);
  if (has_bias &&
      (ctx.input(2).shape != Shape{out_channels} || ctx.input(2).dtype != DataType::kFp32)) {
    return ctx.Error("bias must be fp32 [", out_channels, "]");
  }
  ctx.SetOutput(0, DataType::kFp32, out_shape);
  if (ctx.shape_only) return std::unique_ptr<OpKernel>();
  if (DimProduct(out_shape, 0, out_shape.size()) == 0 ||
      DimProduct(x.shape, 0, x.shape.size()) == 0) {
    return ctx.Unsupported("empty convolution");
  }

  dnnl::memory::dims strides(g.strides.begin(), g.strides.end());
  dnnl::memory::dims dilates, pad_l(g.pad_begin.begin(), g.pad_begin.end()),
      pad_r(g.pad_end.begin(), g.pad_end.end());
  for (int64_t d : g.dilations) dilates.push_back(d - 1);
  if (transposed) {
    // oneDNN derives the output size from the right padding; output_padding shrinks it.
    for (size_t i = 0; i < pad_r.size(); ++i) {
      const int64_t extent = g.dilations[i] * (g.kernel[i] - 1) + 1;
      pad_r[i] = g.strides[i] * (x.shape[i + 2] - 1) + extent - g.pad_begin[i] - g.output[i];
    }
  }

  // bf16 multiply-adds (ComputePrecision::kBf16): the source is rounded into scratch by the
  // reorder below, the weights once when packed; bias, post-ops and the output stay fp32.
  // Transposed convolutions stay fp32.
  const dt compute = ctx.precision == ComputePrecision::kBf16 && !transposed ? dt::bf16 : dt::f32;
  const dnnl::memory::desc src_plain = PlainDesc(x.shape, dt::f32);
  const dnnl::memory::desc src_any(ToDnnlDims(x.shape), compute, tag::any);
  const dnnl::memory::desc w_plain = OnnxWeightsDesc(w.shape, group, transposed);
  const dnnl::memory::desc w_any = AnyWeightsDesc(w_plain, compute);
  const dnnl::memory::desc bias_desc =
      has_bias ? PlainDesc(Shape{out_channels}, dt::f32) : dnnl::memory::desc();
  dnnl::memory::desc dst_desc(ToDnnlDims(out_shape), dt::f32, tag::any);
  const bool channel_blocked = !transposed && WantsChannelBlocked(x, out_channels, group);
  if (channel_blocked) dst_desc = ChannelBlockedDesc(out_shape);
  // A full-size residual post-op input must share the output's layout: adopt its layout when it
  // is blocked, so the residual needs no reorder.
  const auto post_input = static_cast<size_t>(ctx.node->attributes.GetInt("post_op_input", 0));
  for (size_t i = post_input; post_input > 0 && i < ctx.num_inputs(); ++i) {
    if (ctx.has_input(i) && ctx.input(i).layout.blocked && ctx.input(i).shape == out_shape) {
      dst_desc = ctx.input(i).layout.desc;
      break;
    }
  }

  dnnl::convolution_forward::primitive_desc conv_pd;
  dnnl::deconvolution_forward::primitive_desc deconv_pd;
  // A blocked input is read in its own layout (no reorder) unless that costs the kernel, below.
  bool src_fixed = x.layout.blocked;
  // Creates the primitive descriptor for `dst` and `ops`; returns its base for queries.
  auto make_pd = [&](const dnnl::memory::desc& dst,
                     const dnnl::post_ops& ops) -> const dnnl::primitive_desc& {
    dnnl::primitive_attr attr = UserScratchpadAttr();
    attr.set_post_ops(ops);
    const dnnl::memory::desc src = src_fixed ? WithDataType(x.layout.desc, compute) : src_any;
    if (transposed) {
      deconv_pd = dnnl::deconvolution_forward::primitive_desc(
          dnnl::deconvolution_forward::desc(dnnl::prop_kind::forward_inference,
                                            dnnl::algorithm::deconvolution_direct, src, w_any,
                                            bias_desc, dst, strides, dilates, pad_l, pad_r),
          attr, *ctx.engine);
      return deconv_pd;
    }
    conv_pd = dnnl::convolution_forward::primitive_desc(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                        dnnl::algorithm::convolution_direct, src, w_any, bias_desc,
                                        dst, strides, dilates, pad_l, pad_r),
        attr, *ctx.engine);
    return conv_pd;
  };

  std::vector<BinaryPostOpInput> binary_inputs;
  BRIGADE_RETURN_IF_ERROR(CatchDnnl(ctx, transposed ? "deconvolution" : "convolution", [&] {
    // The producer's layout can leave oneDNN only a slow kernel here: RegNet's grouped 3×3s
    // (8 channels per group) on the nChw16c a 1×1 wrote got `ref:any`, ~1000× slower than the
    // `jit:avx512_core` kernel oneDNN runs on nChw8c when it picks the source itself. Then let
    // it pick (its choice follows the CPU's ISA); Run reorders the input into scratch (RegNetY's
    // 16 such reorders: ~0.46 ms of a 10.5 ms run).
    if (src_fixed) {
      const int fixed_rank = ImplRank(make_pd(dst_desc, dnnl::post_ops()));
      src_fixed = false;
      if (fixed_rank == 2 || ImplRank(make_pd(dst_desc, dnnl::post_ops())) <= fixed_rank) {
        src_fixed = true;
      }
    }
    if (channel_blocked && dst_desc == ChannelBlockedDesc(out_shape) &&
        !IsOptimizedImpl(make_pd(dst_desc, dnnl::post_ops()))) {
      // No blocked kernel for this geometry: let oneDNN choose.
      dst_desc = dnnl::memory::desc(ToDnnlDims(out_shape), dt::f32, tag::any);
    }
    if (dst_desc.data.format_kind == dnnl_format_kind_any && PostOpCount(*ctx.node) > 0) {
      // Learn the preferred output layout first; binary post-ops are described in it.
      dst_desc = make_pd(dst_desc, dnnl::post_ops()).dst_desc();
    }
  }));
  dnnl::post_ops ops;
  int sum_input = -1;
  BRIGADE_RETURN_IF_ERROR(
      AppendNodePostOps(ctx, dst_desc, &ops, &binary_inputs, transposed ? nullptr : &sum_input));
  ctx.output_reuses_input = sum_input;
  const dnnl::primitive_desc* pd_ptr = nullptr;
  DnnlCall call;
  BRIGADE_RETURN_IF_ERROR(CatchDnnl(ctx, transposed ? "deconvolution" : "convolution", [&] {
    pd_ptr = &make_pd(dst_desc, ops);
    if (transposed) {
      call.set_primitive(dnnl::deconvolution_forward(deconv_pd));
    } else {
      call.set_primitive(dnnl::convolution_forward(conv_pd));
    }
  }));
  const dnnl::primitive_desc& pd = *pd_ptr;
  std::vector<DnnlKernel::Binding> bindings;
  std::vector<ScratchReorder> reorders;
  // Source.
  const dnnl::memory::desc src_desc = pd.src_desc();
  const dnnl::memory::desc src_now = x.layout.blocked ? x.layout.desc : src_plain;
  const int src_slot = call.AddArg(DNNL_ARG_SRC, src_desc, *ctx.engine);
  if (src_now == src_desc) {
    bindings.push_back({src_slot, 0});
  } else {
    BRIGADE_ASSIGN_OR_RETURN(ScratchReorder r, MakeScratchReorder(ctx, 0, src_now, src_desc));
    r.target_slot = src_slot;
    reorders.push_back(std::move(r));
  }
  // Weights: packed once when constant, reordered per run otherwise.
  const dnnl::memory::desc w_desc = pd.weights_desc();
  std::shared_ptr<const Tensor> packed;
  if (w.constant != nullptr) {
    BRIGADE_ASSIGN_OR_RETURN(packed, PackConstant(ctx, StrCat(ctx.node->name, "/W"), w_plain,
                                                  w.constant->data(), w_desc));
    call.AddArg(DNNL_ARG_WEIGHTS, w_desc, *ctx.engine, packed->data());
  } else {
    const int w_slot = call.AddArg(DNNL_ARG_WEIGHTS, w_desc, *ctx.engine);
    if (w_plain == w_desc) {
      bindings.push_back({w_slot, 1});
    } else {
      BRIGADE_ASSIGN_OR_RETURN(ScratchReorder r, MakeScratchReorder(ctx, 1, w_plain, w_desc));
      r.target_slot = w_slot;
      reorders.push_back(std::move(r));
    }
  }
  if (has_bias) {
    if (ctx.input(2).constant != nullptr) {
      call.AddArg(DNNL_ARG_BIAS, bias_desc, *ctx.engine, ctx.input(2).constant->data());
    } else {
      bindings.push_back({call.AddArg(DNNL_ARG_BIAS, bias_desc, *ctx.engine), 2});
    }
  }
  const int dst_slot = call.AddArg(DNNL_ARG_DST, pd.dst_desc(), *ctx.engine);
  for (const BinaryPostOpInput& in : binary_inputs) {
    const int slot = call.AddArg(in.dnnl_arg, in.desc, *ctx.engine);
    if (in.current == in.desc) {
      bindings.push_back({slot, in.input});
      continue;
    }
    BRIGADE_ASSIGN_OR_RETURN(ScratchReorder r,
                             MakeScratchReorder(ctx, in.input, in.current, in.desc));
    r.target_slot = slot;
    reorders.push_back(std::move(r));
  }
  size_t scratchpad_offset = 0;
  const int scratchpad = AddScratchpad(pd, ctx, call, &scratchpad_offset);

  const dnnl::memory::desc chosen = pd.dst_desc();
  if (chosen != PlainDesc(out_shape, dt::f32)) {
    ctx.outputs[0].layout = Layout{true, chosen};
  }
  return std::make_unique<DnnlKernel>(std::move(call), std::move(bindings), std::move(reorders),
                                      dst_slot, scratchpad, scratchpad_offset,
                                      std::vector<std::shared_ptr<const Tensor>>{packed});
}

absl::StatusOr<std::unique_ptr<OpKernel>> CreateConv(KernelContext& ctx) {
  return BuildConv(ctx, false);
}
absl::StatusOr<std::unique_ptr<OpKernel>> CreateConvTranspose(KernelContext& ctx) {
  return BuildConv(ctx, true);
}

}  // namespace

void RegisterConvKernels(KernelRegistry* registry) {
  KernelDef conv;
  conv.op_type = "Conv";
  conv.create = &CreateConv;
  conv.blocked_inputs = Inputs({0});
  registry->Add(conv);
  KernelDef fused;
  fused.domain = std::string(kBrigadeDomain);
  fused.op_type = "FusedConv";
  fused.create = &CreateConv;
  fused.blocked_inputs = Inputs({0, 3, 4, 5});
  registry->Add(fused);
  KernelDef transposed;
  transposed.op_type = "ConvTranspose";
  transposed.create = &CreateConvTranspose;
  transposed.blocked_inputs = Inputs({0});
  registry->Add(transposed);
}

}  // namespace brigade::engine::onnx
