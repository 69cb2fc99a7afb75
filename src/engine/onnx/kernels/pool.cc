// Pooling: MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool.
//
// fp32 pooling runs on oneDNN (any layout in, same layout out, so pooling between convolutions
// keeps the blocked layout); MaxPool's Indices output, other types, and AveragePool's
// count_include_pad with ceil_mode (whose divisor oneDNN defines differently) run as a loop that
// follows ONNX's reference definitions.

#include <limits>
#include <memory>
#include <vector>

#include "core/status_macros.h"
#include "engine/onnx/kernels/conv_geometry.h"
#include "engine/onnx/kernels/dnnl_util.h"
#include "engine/onnx/kernels/kernel_util.h"
#include "engine/onnx/kernels/registry.h"

namespace brigade::engine::onnx {
namespace {

class LoopPoolKernel final : public OpKernel {
 public:
  LoopPoolKernel(DataType dtype, bool max, bool include_pad, bool column_major, Shape in,
                 ConvGeometry g)
      : dtype_(dtype),
        max_(max),
        include_pad_(include_pad),
        column_major_(column_major),
        in_(std::move(in)),
        g_(std::move(g)) {}

  absl::Status Run(const RunContext& ctx) override {
    VisitNumeric(dtype_, [&]<typename T>() {
      if constexpr (!std::is_same_v<T, bool>) RunTyped<T>(ctx);
    });
    return absl::OkStatus();
  }

 private:
  template <typename T>
  void RunTyped(const RunContext& ctx) {
    const size_t spatial = in_.size() - 2;
    const int64_t planes = in_[0] * in_[1];
    const int64_t in_size = DimProduct(in_, 2, in_.size());
    int64_t out_size = 1;
    for (int64_t o : g_.output) out_size *= o;
    const T* in = ctx.in<T>(0);
    T* out = ctx.out<T>(0);
    int64_t* indices = ctx.outputs.size() > 1 ? ctx.out<int64_t>(1) : nullptr;
    const Shape in_strides = Strides(Shape(in_.begin() + 2, in_.end()));
    std::vector<int64_t> pos(spatial), lo(spatial), hi(spatial), k(spatial);
    for (int64_t p = 0; p < planes; ++p) {
      const T* plane = in + p * in_size;
      for (int64_t o = 0; o < out_size; ++o) {
        int64_t rest = o, count_padded = 1;
        for (size_t d = spatial; d-- > 0;) {
          pos[d] = rest % g_.output[d];
          rest /= g_.output[d];
          const int64_t start = pos[d] * g_.strides[d] - g_.pad_begin[d];
          const int64_t extent = g_.dilations[d] * (g_.kernel[d] - 1) + 1;
          const int64_t end_padded = std::min(start + extent, in_[d + 2] + g_.pad_end[d]);
          count_padded *= (end_padded - start + g_.dilations[d] - 1) / g_.dilations[d];
          lo[d] = start;
          hi[d] = start + extent;
        }
        // Walk the window's taps.
        double sum = 0;
        int64_t count = 0;
        T best = std::numeric_limits<T>::lowest();
        if constexpr (std::is_floating_point_v<T>) best = -std::numeric_limits<T>::infinity();
        int64_t best_index = -1;
        std::fill(k.begin(), k.end(), 0);
        while (true) {
          bool inside = true;
          int64_t offset = 0;
          for (size_t d = 0; d < spatial; ++d) {
            const int64_t c = lo[d] + k[d] * g_.dilations[d];
            if (c < 0 || c >= in_[d + 2]) {
              inside = false;
              break;
            }
            offset += c * in_strides[d];
          }
          if (inside) {
            const T v = plane[offset];
            if (max_) {
              if (best_index < 0 || v > best) {
                best = v;
                best_index = offset;
              }
            } else {
              sum += static_cast<double>(v);
              ++count;
            }
          }
          size_t d = spatial;
          while (d-- > 0) {
            if (++k[d] < g_.kernel[d]) break;
            k[d] = 0;
          }
          if (d == static_cast<size_t>(-1)) break;
        }
        if (max_) {
          out[p * out_size + o] = best;
          if (indices != nullptr) {
            int64_t index = best_index;
            if (column_major_ && spatial == 2 && best_index >= 0) {
              index = (best_index % in_[3]) * in_[2] + best_index / in_[3];
            }
            indices[p * out_size + o] = p * in_size + index;
          }
        } else {
          const int64_t divisor = include_pad_ ? count_padded : count;
          out[p * out_size + o] =
              static_cast<T>(divisor == 0 ? 0.0 : sum / static_cast<double>(divisor));
        }
      }
    }
  }

  const DataType dtype_;
  const bool max_, include_pad_, column_major_;
  const Shape in_;
  const ConvGeometry g_;
};

absl::StatusOr<std::unique_ptr<OpKernel>> CreatePool(KernelContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  const std::string& op = ctx.node->op_type;
  const bool global = op == "GlobalAveragePool" || op == "GlobalMaxPool";
  const bool max = op == "MaxPool" || op == "GlobalMaxPool";
  if (x.shape.size() < 3) return ctx.Error("input must have rank >= 3");
  if (x.dtype == DataType::kBool || !VisitNumeric(x.dtype, []<typename T>() {})) {
    return ctx.Unsupported("element type ", DataTypeName(x.dtype));
  }
  const AttributeMap& attrs = ctx.node->attributes;
  std::vector<int64_t> kernel;
  if (global) {
    kernel.assign(x.shape.begin() + 2, x.shape.end());
  } else {
    kernel.assign(attrs.GetInts("kernel_shape").begin(), attrs.GetInts("kernel_shape").end());
  }
  const bool ceil_mode = !global && attrs.GetInt("ceil_mode", 0) != 0;
  ConvGeometry g;
  if (global) {
    const size_t spatial = x.shape.size() - 2;
    g.kernel = kernel;
    g.strides.assign(spatial, 1);
    g.dilations.assign(spatial, 1);
    g.pad_begin.assign(spatial, 0);
    g.pad_end.assign(spatial, 0);
    g.output.assign(spatial, 1);
  } else {
    BRIGADE_ASSIGN_OR_RETURN(g, ForwardGeometry(ctx, x.shape, kernel, ceil_mode));
  }
  Shape out{x.shape[0], x.shape[1]};
  out.insert(out.end(), g.output.begin(), g.output.end());
  ctx.SetOutput(0, x.dtype, out);
  const bool want_indices = ctx.outputs.size() > 1 && ctx.output_used[1];
  if (want_indices) ctx.SetOutput(1, DataType::kInt64, out);
  if (ctx.shape_only) return std::unique_ptr<OpKernel>();
  const bool include_pad = attrs.GetInt("count_include_pad", 0) != 0;
  const bool dnnl_ok = x.dtype == DataType::kFp32 && !want_indices && x.shape.size() <= 5 &&
                       !(include_pad && ceil_mode) && DimProduct(out, 0, out.size()) > 0;
  if (!dnnl_ok) {
    if (x.layout.blocked) return ctx.Error("blocked input reached the pooling loop");
    return std::make_unique<LoopPoolKernel>(x.dtype, max, include_pad,
                                            attrs.GetInt("storage_order", 0) != 0, x.shape, g);
  }
  dnnl::memory::dims strides(g.strides.begin(), g.strides.end());
  dnnl::memory::dims kernel_dims(g.kernel.begin(), g.kernel.end());
  dnnl::memory::dims dilation, pad_l(g.pad_begin.begin(), g.pad_begin.end()), pad_r;
  for (size_t i = 0; i < g.kernel.size(); ++i) {
    dilation.push_back(g.dilations[i] - 1);
    const int64_t extent = g.dilations[i] * (g.kernel[i] - 1) + 1;
    // Right padding that makes oneDNN produce exactly g.output (covers ceil_mode).
    pad_r.push_back((g.output[i] - 1) * g.strides[i] + extent - x.shape[i + 2] - g.pad_begin[i]);
  }
  BRIGADE_ASSIGN_OR_RETURN(dnnl::memory::desc src, DescOf(x));
  const dnnl::memory::desc dst(ToDnnlDims(out), dnnl::memory::data_type::f32,
                               dnnl::memory::format_tag::any);
  const dnnl::algorithm alg = max ? dnnl::algorithm::pooling_max
                                  : (include_pad ? dnnl::algorithm::pooling_avg_include_padding
                                                 : dnnl::algorithm::pooling_avg_exclude_padding);
  DnnlCall call;
  int scratch = -1;
  dnnl::memory::desc chosen;
  BRIGADE_RETURN_IF_ERROR(CatchDnnl(ctx, "pooling", [&] {
    dnnl::pooling_v2_forward::primitive_desc pd(
        dnnl::pooling_v2_forward::desc(dnnl::prop_kind::forward_inference, alg, src, dst, strides,
                                       kernel_dims, dilation, pad_l, pad_r),
        UserScratchpadAttr(), *ctx.engine);
    call.set_primitive(dnnl::pooling_v2_forward(pd));
    call.AddArg(DNNL_ARG_SRC, src, *ctx.engine);
    chosen = pd.dst_desc();
    call.AddArg(DNNL_ARG_DST, chosen, *ctx.engine);
    scratch = AddScratchpad(pd, ctx, call);
  }));
  if (chosen != PlainDesc(out, dnnl::memory::data_type::f32)) {
    ctx.outputs[0].layout = Layout{true, chosen};
  }
  return std::make_unique<DnnlUnaryKernel>(std::move(call), scratch);
}

}  // namespace

void RegisterPoolKernels(KernelRegistry* registry) {
  for (const char* name : {"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"}) {
    KernelDef def;
    def.op_type = name;
    def.create = &CreatePool;
    def.blocked_inputs = Inputs({0});
    registry->Add(std::move(def));
  }
}

}  // namespace brigade::engine::onnx
