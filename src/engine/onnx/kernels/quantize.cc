// QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear (per-tensor and per-axis).
//
// Rounding is half-to-even and results saturate to the output type, as ONNX specifies. When a
// QuantizeLinear/DequantizeLinear pair sits around a Conv or MatMul, the QDQ fusion pass replaces
// the whole group by one int8 primitive; these kernels handle the pairs that remain. A
// per-tensor QuantizeLinear/DequantizeLinear is elementwise, so it also takes a blocked input
// without padding (the layout an int8 convolution left, channels a multiple of the block) and
// writes the same layout: no reorder between the int8 layers and what runs between them.

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "core/status_macros.h"
#include "engine/onnx/kernels/dnnl_util.h"
#include "engine/onnx/kernels/kernel_util.h"
#include "engine/onnx/kernels/registry.h"

namespace brigade::engine::onnx {
namespace {

template <typename Q>
Q Saturate(double v) {
  const double lo = static_cast<double>(std::numeric_limits<Q>::lowest());
  const double hi = static_cast<double>(std::numeric_limits<Q>::max());
  return static_cast<Q>(std::clamp(v, lo, hi));
}

// Whether a Q/DQ node takes `inputs[0]` in its blocked layout: per-tensor scale, no padding.
bool TakesBlockedUnpadded(const Node& /*node*/, size_t input,
                          std::span<const ValueInfo* const> inputs) {
  if (input != 0 || inputs.size() < 2 || inputs[0] == nullptr || inputs[1] == nullptr) return false;
  return inputs[1]->num_elements() == 1 && HasNoPadding(*inputs[0]);
}

// The output layout of an elementwise Q/DQ: the input's, with the output's element type.
Layout SameLayoutAs(const ValueInfo& x, dnnl_data_type_t type) {
  if (!x.layout.blocked) return Layout{};
  Layout out = x.layout;
  out.desc.data.data_type = type;
  return out;
}

// Elements per thread's share of a per-tensor QuantizeLinear.
constexpr int64_t kQuantizeGrain = int64_t{1} << 15;

// y[i] = saturate(round_half_even(x[i] / scale) + zero_point), in a loop the compiler
// vectorizes. Divide in fp32 as ONNX's reference and ONNX Runtime do: 0.5 / (5/255) must give
// 25.5 (rounding to 26), not the 25.4999... a double division gives. Clamping to the output's
// range (less the zero point) before rounding gives what saturating after it gives, and keeps
// |v| < 2^22, where adding and subtracting 1.5 · 2^23 rounds half to even in the default
// rounding mode (std::nearbyint does not vectorize without SSE4.1, which the baseline lacks).
template <typename Q>
void QuantizeRow(const float* x, int64_t n, float scale, int zero_point, Q* y) {
  constexpr float kRound = 12582912.0f;  // 1.5 · 2^23
  const float lo = static_cast<float>(std::numeric_limits<Q>::lowest() - zero_point);
  const float hi = static_cast<float>(std::numeric_limits<Q>::max() - zero_point);
  for (int64_t i = 0; i < n; ++i) {
    float v = x[i] / scale;
    v = v < lo ? lo : v;
    v = v > hi ? hi : v;
    v = (v + kRound) - kRound;
    y[i] = static_cast<Q>(static_cast<int>(v) + zero_point);
  }
}

// Elements are grouped [outer, channels, inner]; channel c uses scale[c] and zero_point[c]
// (per-axis), or everything uses element 0 (per-tensor: channels = 1).
struct Grouping {
  int64_t outer = 1, channels = 1, inner = 1;
};

absl::StatusOr<Grouping> GroupingOf(const KernelContext& ctx, const Shape& shape,
                                    int64_t scale_count) {
  Grouping g;
  if (scale_count <= 1) {
    g.inner = DimProduct(shape, 0, shape.size());
    return g;
  }
  BRIGADE_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx, ctx.node->attributes.GetInt("axis", 1),
                                                       static_cast<int64_t>(shape.size())));
  const auto a = static_cast<size_t>(axis);
  if (shape[a] != scale_count) {
    return ctx.Error("per-axis scale has ", scale_count, " values, axis ", axis, " has ", shape[a]);
  }
  g.outer = DimProduct(shape, 0, a);
  g.channels = shape[a];
  g.inner = DimProduct(shape, a + 1, shape.size());
  return g;
}

class QuantizeKernel final : public OpKernel {
 public:
  QuantizeKernel(DataType in_type, DataType out_type, Grouping g, bool has_zero_point)
      : in_type_(in_type), out_type_(out_type), g_(g), has_zero_point_(has_zero_point) {}

  absl::Status Run(const RunContext& ctx) override {
    auto run = [&]<typename Q>() {
      const float* scale = ctx.in<float>(1);
      const Q* zp = has_zero_point_ ? ctx.in<Q>(2) : nullptr;
      Q* y = ctx.out<Q>(0);
      for (int64_t c = 0; c < g_.channels; ++c) {
        if (scale[c] == 0) {
          return absl::InvalidArgumentError("QuantizeLinear: y_scale is zero");
        }
      }
      // One channel (per-tensor): split the elements across threads instead of the channels.
      const int64_t rows = g_.outer * g_.channels;
      const int64_t parts = rows == 1 ? std::max<int64_t>(1, g_.inner / kQuantizeGrain) : rows;
      ParallelFor(ctx.threads, parts, 1, [&](int64_t b, int64_t e) {
        for (int64_t part = b; part < e; ++part) {
          const int64_t oc = rows == 1 ? 0 : part;
          const int64_t c = oc % g_.channels;
          const int64_t begin = rows == 1 ? g_.inner * part / parts : 0;
          const int64_t end = rows == 1 ? g_.inner * (part + 1) / parts : g_.inner;
          const int64_t base = oc * g_.inner;
          const int zero = zp != nullptr ? static_cast<int>(zp[c]) : 0;
          if (in_type_ == DataType::kFp32) {
            QuantizeRow(ctx.in<float>(0) + base + begin, end - begin, scale[c], zero,
                        y + base + begin);
            continue;
          }
          const float s = scale[c];
          for (int64_t i = begin; i < end; ++i) {
            const float x = static_cast<float>(ctx.in<int32_t>(0)[base + i]);
            y[base + i] = Saturate<Q>(std::nearbyint(static_cast<double>(x / s)) + zero);
          }
        }
      });
      return absl::OkStatus();
    };
    return out_type_ == DataType::kInt8 ? run.template operator()<int8_t>()
                                        : run.template operator()<uint8_t>();
  }

 private:
  const DataType in_type_, out_type_;
  const Grouping g_;
  const bool has_zero_point_;
};

absl::StatusOr<std::unique_ptr<OpKernel>> CreateQuantize(KernelContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  if (x.dtype != DataType::kFp32 && x.dtype != DataType::kInt32) {
    return ctx.Unsupported("input type ", DataTypeName(x.dtype));
  }
  if (ctx.input(1).dtype != DataType::kFp32) return ctx.Error("y_scale must be fp32");
  DataType out_type = DataType::kUint8;
  if (ctx.has_input(2)) {
    out_type = ctx.input(2).dtype;
    if (ctx.input(2).num_elements() != ctx.input(1).num_elements()) {
      return ctx.Error("y_zero_point and y_scale differ in size");
    }
  }
  if (out_type != DataType::kUint8 && out_type != DataType::kInt8) {
    return ctx.Unsupported("output type ", DataTypeName(out_type));
  }
  if (x.layout.blocked && ctx.input(1).num_elements() != 1) {
    return ctx.Error("blocked input with a per-axis scale");
  }
  Grouping g{1, 1, x.num_elements()};
  if (!x.layout.blocked) {
    BRIGADE_ASSIGN_OR_RETURN(g, GroupingOf(ctx, x.shape, ctx.input(1).num_elements()));
  }
  ctx.SetOutput(0, out_type, x.shape);
  ctx.outputs[0].layout = SameLayoutAs(x, out_type == DataType::kInt8 ? dnnl_s8 : dnnl_u8);
  return std::make_unique<QuantizeKernel>(x.dtype, out_type, g, ctx.has_input(2));
}

class DequantizeKernel final : public OpKernel {
 public:
  DequantizeKernel(DataType in_type, Grouping g, bool has_zero_point)
      : in_type_(in_type), g_(g), has_zero_point_(has_zero_point) {}

  absl::Status Run(const RunContext& ctx) override {
    VisitNumeric(in_type_, [&]<typename Q>() {
      if constexpr (std::is_integral_v<Q> && !std::is_same_v<Q, bool>) {
        const Q* x = ctx.in<Q>(0);
        const float* scale = ctx.in<float>(1);
        const Q* zp = has_zero_point_ ? ctx.in<Q>(2) : nullptr;
        float* y = ctx.out<float>(0);
        ParallelFor(ctx.threads, g_.outer * g_.channels, 1, [&](int64_t b, int64_t e) {
          for (int64_t oc = b; oc < e; ++oc) {
            const int64_t c = oc % g_.channels;
            const float s = scale[c];
            const int64_t z = zp != nullptr ? static_cast<int64_t>(zp[c]) : 0;
            const int64_t base = oc * g_.inner;
            for (int64_t i = 0; i < g_.inner; ++i) {
              y[base + i] = static_cast<float>(static_cast<int64_t>(x[base + i]) - z) * s;
            }
          }
        });
      }
    });
    return absl::OkStatus();
  }

 private:
  const DataType in_type_;
  const Grouping g_;
  const bool has_zero_point_;
};

absl::StatusOr<std::unique_ptr<OpKernel>> CreateDequantize(KernelContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  if (x.dtype != DataType::kUint8 && x.dtype != DataType::kInt8 && x.dtype != DataType::kInt32) {
    return ctx.Unsupported("input type ", DataTypeName(x.dtype));
  }
  if (ctx.input(1).dtype != DataType::kFp32) return ctx.Error("x_scale must be fp32");
  if (ctx.has_input(2) && (ctx.input(2).dtype != x.dtype ||
                           ctx.input(2).num_elements() != ctx.input(1).num_elements())) {
    return ctx.Error("x_zero_point must match x's type and x_scale's size");
  }
  if (x.layout.blocked && ctx.input(1).num_elements() != 1) {
    return ctx.Error("blocked input with a per-axis scale");
  }
  Grouping g{1, 1, x.num_elements()};
  if (!x.layout.blocked) {
    BRIGADE_ASSIGN_OR_RETURN(g, GroupingOf(ctx, x.shape, ctx.input(1).num_elements()));
  }
  ctx.SetOutput(0, DataType::kFp32, x.shape);
  ctx.outputs[0].layout = SameLayoutAs(x, dnnl_f32);
  return std::make_unique<DequantizeKernel>(x.dtype, g, ctx.has_input(2));
}

// The range of x[0, n) widened to include 0, as DynamicQuantizeLinear defines it. Sixteen
// running minima and maxima the compiler keeps in vector registers: `v < lo ? v : lo` is exactly
// what minps computes, so this vectorizes without fast-math (std::min's reduction does not).
// NaNs are skipped, as std::min(lo, v) skipped them.
void RangeWithZero(const float* x, int64_t n, float* lo_out, float* hi_out) {
  constexpr int kLanes = 16;
  float lo[kLanes] = {}, hi[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) {
      const float v = x[i + j];
      lo[j] = v < lo[j] ? v : lo[j];
      hi[j] = v > hi[j] ? v : hi[j];
    }
  }
  float l = 0, h = 0;
  for (int j = 0; j < kLanes; ++j) {
    l = lo[j] < l ? lo[j] : l;
    h = hi[j] > h ? hi[j] : h;
  }
  for (; i < n; ++i) {
    l = x[i] < l ? x[i] : l;
    h = x[i] > h ? x[i] : h;
  }
  *lo_out = l;
  *hi_out = h;
}

// Two passes over x, each split across threads: its range, then QuantizeRow with the scale and
// zero point that range gives (a dynamic quantization's activation: BERT's [128, 768] inputs of
// every Linear; the scalar loops took 25% of an INT8 DistilBERT run).
class DynamicQuantizeKernel final : public OpKernel {
 public:
  explicit DynamicQuantizeKernel(int64_t count) : count_(count) {}
  absl::Status Run(const RunContext& ctx) override {
    const float* x = ctx.in<float>(0);
    const int64_t parts = std::clamp<int64_t>(count_ / kQuantizeGrain, 1, kMaxParts);
    float lo[kMaxParts], hi[kMaxParts];
    ParallelFor(ctx.threads, parts, 1, [&](int64_t b, int64_t e) {
      for (int64_t part = b; part < e; ++part) {
        const int64_t begin = count_ * part / parts, end = count_ * (part + 1) / parts;
        RangeWithZero(x + begin, end - begin, &lo[part], &hi[part]);
      }
    });
    const float low = *std::min_element(lo, lo + parts);
    const float high = *std::max_element(hi, hi + parts);
    const float scale = (high - low) / 255.0f;
    const uint8_t zp = scale == 0 ? 0 : Saturate<uint8_t>(std::nearbyint(-low / scale));
    uint8_t* y = ctx.out<uint8_t>(0);
    if (scale == 0) {
      std::fill(y, y + count_, zp);
    } else {
      ParallelFor(ctx.threads, parts, 1, [&](int64_t b, int64_t e) {
        for (int64_t part = b; part < e; ++part) {
          const int64_t begin = count_ * part / parts, end = count_ * (part + 1) / parts;
          QuantizeRow(x + begin, end - begin, scale, zp, y + begin);
        }
      });
    }
    *ctx.out<float>(1) = scale;
    *ctx.out<uint8_t>(2) = zp;
    return absl::OkStatus();
  }

 private:
  static constexpr int64_t kMaxParts = 64;
  const int64_t count_;
};

absl::StatusOr<std::unique_ptr<OpKernel>> CreateDynamicQuantize(KernelContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  if (x.dtype != DataType::kFp32) return ctx.Unsupported("input type ", DataTypeName(x.dtype));
  ctx.SetOutput(0, DataType::kUint8, x.shape);
  ctx.SetOutput(1, DataType::kFp32, Shape{});
  ctx.SetOutput(2, DataType::kUint8, Shape{});
  return std::make_unique<DynamicQuantizeKernel>(x.num_elements());
}

}  // namespace

void RegisterQuantizeKernels(KernelRegistry* registry) {
  KernelDef q;
  q.op_type = "QuantizeLinear";
  q.create = &CreateQuantize;
  q.blocked_inputs = Inputs({0});
  q.takes_blocked = &TakesBlockedUnpadded;
  registry->Add(q);
  KernelDef dq;
  dq.op_type = "DequantizeLinear";
  dq.create = &CreateDequantize;
  dq.blocked_inputs = Inputs({0});
  dq.takes_blocked = &TakesBlockedUnpadded;
  registry->Add(dq);
  KernelDef dyn;
  dyn.op_type = "DynamicQuantizeLinear";
  dyn.create = &CreateDynamicQuantize;
  registry->Add(dyn);
  RegisterQLinearKernels(registry);
}

}  // namespace brigade::engine::onnx
