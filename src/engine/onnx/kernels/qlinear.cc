// Integer matmul and convolution ops: MatMulInteger, QLinearMatMul, ConvInteger, QLinearConv.
//
// These kernels define the exact integer semantics (int32 accumulation of zero-point-shifted
// products, then requantization with half-to-even rounding and saturation). The fused int8
// primitives built by the QDQ pass are checked against the same definitions.

#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "core/status_macros.h"
#include "engine/onnx/kernels/conv_geometry.h"
#include "engine/onnx/kernels/kernel_util.h"
#include "engine/onnx/kernels/qlinear_dnnl.h"
#include "engine/onnx/kernels/registry.h"

namespace brigade::engine::onnx {
namespace {

bool IsQuantType(DataType t) { return t == DataType::kUint8 || t == DataType::kInt8; }

// Reads element i of an 8-bit buffer of `type` as int32.
inline int32_t Load8(DataType type, const std::byte* p, int64_t i) {
  return type == DataType::kInt8 ? static_cast<int32_t>(reinterpret_cast<const int8_t*>(p)[i])
                                 : static_cast<int32_t>(reinterpret_cast<const uint8_t*>(p)[i]);
}

// A zero point or scale input that is a scalar or a vector indexed by row/column/channel.
struct PerIndex {
  size_t input = 0;
  bool present = false;
  int64_t count = 1;
};

absl::StatusOr<PerIndex> Param(const KernelContext& ctx, size_t input, int64_t allowed) {
  PerIndex p;
  p.input = input;
  p.present = ctx.has_input(input);
  if (!p.present) return p;
  p.count = ctx.input(input).num_elements();
  if (p.count != 1 && p.count != allowed) {
    return ctx.Error("input ", input, " must be a scalar or hold ", allowed, " values");
  }
  return p;
}

int32_t ZeroPoint(const RunContext& ctx, const PerIndex& p, DataType type, int64_t i) {
  if (!p.present) return 0;
  return Load8(type, ctx.inputs[p.input], p.count == 1 ? 0 : i);
}

float Scale(const RunContext& ctx, const PerIndex& p, int64_t i) {
  return ctx.in<float>(p.input)[p.count == 1 ? 0 : i];
}

template <typename Q>
Q Requantize(double v, int32_t zero_point) {
  const double r = std::nearbyint(v) + zero_point;
  return static_cast<Q>(std::clamp(r, static_cast<double>(std::numeric_limits<Q>::lowest()),
                                   static_cast<double>(std::numeric_limits<Q>::max())));
}

// ---------------------------------------------------------------------------------------------
// MatMulInteger / QLinearMatMul

struct MatMulLayout {
  int64_t m = 0, k = 0, n = 0;
  std::vector<std::pair<int64_t, int64_t>> batch_offsets;  // element offsets of A and B
  Shape out;
};

absl::StatusOr<MatMulLayout> Layout2(const KernelContext& ctx, Shape a, Shape b) {
  MatMulLayout l;
  const bool drop_m = a.size() == 1, drop_n = b.size() == 1;
  if (drop_m) a.insert(a.begin(), 1);
  if (drop_n) b.push_back(1);
  const size_t rank = std::max(a.size(), b.size());
  while (a.size() < rank) a.insert(a.begin(), 1);
  while (b.size() < rank) b.insert(b.begin(), 1);
  l.m = a[rank - 2];
  l.k = a[rank - 1];
  l.n = b[rank - 1];
  if (b[rank - 2] != l.k) return ctx.Error("inner dimensions differ");
  Shape batch;
  for (size_t d = 0; d + 2 < rank; ++d) {
    if (a[d] != b[d] && a[d] != 1 && b[d] != 1) return ctx.Error("batch dims do not broadcast");
    batch.push_back(std::max(a[d], b[d]));
  }
  const int64_t batches = DimProduct(batch, 0, batch.size());
  const Shape sa = Strides(a), sb = Strides(b);
  for (int64_t i = 0; i < batches; ++i) {
    int64_t rest = i, oa = 0, ob = 0;
    for (size_t d = batch.size(); d-- > 0;) {
      const int64_t idx = rest % batch[d];
      rest /= batch[d];
      oa += (a[d] == 1 ? 0 : idx) * sa[d];
      ob += (b[d] == 1 ? 0 : idx) * sb[d];
    }
    l.batch_offsets.emplace_back(oa, ob);
  }
  l.out = batch;
  if (!drop_m) l.out.push_back(l.m);
  if (!drop_n) l.out.push_back(l.n);
  return l;
}

class IntMatMulKernel final : public OpKernel {
 public:
  // Inputs: A at 0, B at `b_input`; zero points/scales as described by the PerIndex params.
  // Output int32 (MatMulInteger) or requantized 8-bit (QLinearMatMul).
  IntMatMulKernel(MatMulLayout l, DataType a_type, DataType b_type, size_t b_input, PerIndex a_zp,
                  PerIndex b_zp, bool qlinear, PerIndex a_scale, PerIndex b_scale, PerIndex y_scale,
                  PerIndex y_zp, DataType y_type)
      : l_(std::move(l)),
        a_type_(a_type),
        b_type_(b_type),
        b_input_(b_input),
        a_zp_(a_zp),
        b_zp_(b_zp),
        qlinear_(qlinear),
        a_scale_(a_scale),
        b_scale_(b_scale),
        y_scale_(y_scale),
        y_zp_(y_zp),
        y_type_(y_type) {}

  absl::Status Run(const RunContext& ctx) override {
    const std::byte* a = ctx.inputs[0];
    const std::byte* b = ctx.inputs[b_input_];
    for (size_t batch = 0; batch < l_.batch_offsets.size(); ++batch) {
      const auto [oa, ob] = l_.batch_offsets[batch];
      for (int64_t i = 0; i < l_.m; ++i) {
        const int32_t za = ZeroPoint(ctx, a_zp_, a_type_, i);
        for (int64_t j = 0; j < l_.n; ++j) {
          const int32_t zb = ZeroPoint(ctx, b_zp_, b_type_, j);
          int64_t acc = 0;
          for (int64_t p = 0; p < l_.k; ++p) {
            acc += static_cast<int64_t>(Load8(a_type_, a, oa + i * l_.k + p) - za) *
                   (Load8(b_type_, b, ob + p * l_.n + j) - zb);
          }
          const int64_t o = (static_cast<int64_t>(batch) * l_.m + i) * l_.n + j;
          if (!qlinear_) {
            ctx.out<int32_t>(0)[o] = static_cast<int32_t>(acc);
            continue;
          }
          const double real = static_cast<double>(acc) * Scale(ctx, a_scale_, i) *
                              Scale(ctx, b_scale_, j) / Scale(ctx, y_scale_, 0);
          const int32_t zy = ZeroPoint(ctx, y_zp_, y_type_, 0);
          if (y_type_ == DataType::kInt8) {
            ctx.out<int8_t>(0)[o] = Requantize<int8_t>(real, zy);
          } else {
            ctx.out<uint8_t>(0)[o] = Requantize<uint8_t>(real, zy);
          }
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  const MatMulLayout l_;
  const DataType a_type_, b_type_;
  const size_t b_input_;
  const PerIndex a_zp_, b_zp_;
  const bool qlinear_;
  const PerIndex a_scale_, b_scale_, y_scale_, y_zp_;
  const DataType y_type_;
};

absl::StatusOr<std::unique_ptr<OpKernel>> CreateMatMulInteger(KernelContext& ctx) {
  BRIGADE_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> fast, TryDnnlMatMulInteger(ctx));
  if (fast != nullptr) return fast;
  const ValueInfo& a = ctx.input(0);
  const ValueInfo& b = ctx.input(1);
  if (!IsQuantType(a.dtype) || !IsQuantType(b.dtype)) return ctx.Error("A and B must be 8-bit");
  BRIGADE_ASSIGN_OR_RETURN(MatMulLayout l, Layout2(ctx, a.shape, b.shape));
  BRIGADE_ASSIGN_OR_RETURN(PerIndex a_zp, Param(ctx, 2, l.m));
  BRIGADE_ASSIGN_OR_RETURN(PerIndex b_zp, Param(ctx, 3, l.n));
  ctx.SetOutput(0, DataType::kInt32, l.out);
  return std::make_unique<IntMatMulKernel>(std::move(l), a.dtype, b.dtype, 1, a_zp, b_zp, false,
                                           PerIndex{}, PerIndex{}, PerIndex{}, PerIndex{},
                                           DataType::kInt32);
}

absl::StatusOr<std::unique_ptr<OpKernel>> CreateQLinearMatMul(KernelContext& ctx) {
  if (ctx.num_inputs() < 8) return ctx.Error("needs 8 inputs");
  BRIGADE_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> fast, TryDnnlQLinearMatMul(ctx));
  if (fast != nullptr) return fast;
  if (ctx.has_input(8) || !ctx.node->attributes.GetStrings("post_ops").empty()) {
    return ctx.Unsupported("bias or post-ops on a QLinearMatMul oneDNN cannot run");
  }
  const ValueInfo& a = ctx.input(0);
  const ValueInfo& b = ctx.input(3);
  if (!IsQuantType(a.dtype) || !IsQuantType(b.dtype)) return ctx.Error("a and b must be 8-bit");
  const DataType y_type = ctx.input(7).dtype;
  if (!IsQuantType(y_type)) return ctx.Error("y_zero_point must be 8-bit");
  BRIGADE_ASSIGN_OR_RETURN(MatMulLayout l, Layout2(ctx, a.shape, b.shape));
  BRIGADE_ASSIGN_OR_RETURN(PerIndex a_scale, Param(ctx, 1, l.m));
  BRIGADE_ASSIGN_OR_RETURN(PerIndex a_zp, Param(ctx, 2, l.m));
  BRIGADE_ASSIGN_OR_RETURN(PerIndex b_scale, Param(ctx, 4, l.n));
  BRIGADE_ASSIGN_OR_RETURN(PerIndex b_zp, Param(ctx, 5, l.n));
  BRIGADE_ASSIGN_OR_RETURN(PerIndex y_scale, Param(ctx, 6, 1));
  BRIGADE_ASSIGN_OR_RETURN(PerIndex y_zp, Param(ctx, 7, 1));
  ctx.SetOutput(0, y_type, l.out);
  return std::make_unique<IntMatMulKernel>(std::move(l), a.dtype, b.dtype, 3, a_zp, b_zp, true,
                                           a_scale, b_scale, y_scale, y_zp, y_type);
}

// ---------------------------------------------------------------------------------------------
// ConvInteger / QLinearConv

struct ConvInputs {
  size_t x = 0, x_zp = 0, w = 1, w_zp = 0, bias = 0;
  bool has_x_zp = false, has_w_zp = false, has_bias = false;
  bool qlinear = false;
  size_t x_scale = 0, w_scale = 0, y_scale = 0, y_zp = 0;
};

class IntConvKernel final : public OpKernel {
 public:
  IntConvKernel(ConvInputs in, DataType x_type, DataType w_type, DataType y_type, Shape x_shape,
                Shape w_shape, ConvGeometry g, int64_t group, PerIndex w_zp, PerIndex w_scale)
      : in_(in),
        x_type_(x_type),
        w_type_(w_type),
        y_type_(y_type),
        x_shape_(std::move(x_shape)),
        w_shape_(std::move(w_shape)),
        g_(std::move(g)),
        group_(group),
        w_zp_(w_zp),
        w_scale_(w_scale) {}

  absl::Status Run(const RunContext& ctx) override {
    const size_t spatial = x_shape_.size() - 2;
    const int64_t n = x_shape_[0], c = x_shape_[1], m = w_shape_[0];
    const int64_t c_per_group = c / group_, m_per_group = m / group_;
    const int64_t in_size = DimProduct(x_shape_, 2, x_shape_.size());
    const int64_t kernel_size = DimProduct(w_shape_, 2, w_shape_.size());
    int64_t out_size = 1;
    for (int64_t o : g_.output) out_size *= o;
    const Shape in_strides = Strides(Shape(x_shape_.begin() + 2, x_shape_.end()));
    const int32_t x_zp = in_.has_x_zp ? Load8(x_type_, ctx.inputs[in_.x_zp], 0) : 0;
    std::vector<int64_t> pos(spatial), tap(spatial);
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t oc = 0; oc < m; ++oc) {
        const int64_t grp = oc / m_per_group;
        const int32_t w_zp = ZeroPoint(ctx, w_zp_, w_type_, oc);
        for (int64_t o = 0; o < out_size; ++o) {
          int64_t rest = o;
          for (size_t d = spatial; d-- > 0;) {
            pos[d] = rest % g_.output[d];
            rest /= g_.output[d];
          }
          int64_t acc = 0;
          for (int64_t ic = 0; ic < c_per_group; ++ic) {
            const int64_t channel = grp * c_per_group + ic;
            const int64_t x_base = (b * c + channel) * in_size;
            const int64_t w_base = (oc * c_per_group + ic) * kernel_size;
            for (int64_t k = 0; k < kernel_size; ++k) {
              int64_t krest = k, offset = 0;
              bool inside = true;
              for (size_t d = spatial; d-- > 0;) {
                tap[d] = krest % g_.kernel[d];
                krest /= g_.kernel[d];
                const int64_t coord =
                    pos[d] * g_.strides[d] - g_.pad_begin[d] + tap[d] * g_.dilations[d];
                if (coord < 0 || coord >= x_shape_[d + 2]) inside = false;
                offset += coord * in_strides[d];
              }
              if (!inside) continue;
              acc +=
                  static_cast<int64_t>(Load8(x_type_, ctx.inputs[in_.x], x_base + offset) - x_zp) *
                  (Load8(w_type_, ctx.inputs[in_.w], w_base + k) - w_zp);
            }
          }
          const int64_t out_index = (b * m + oc) * out_size + o;
          if (!in_.qlinear) {
            ctx.out<int32_t>(0)[out_index] = static_cast<int32_t>(acc);
            continue;
          }
          if (in_.has_bias) acc += ctx.in<int32_t>(in_.bias)[oc];
          const double real = static_cast<double>(acc) * ctx.in<float>(in_.x_scale)[0] *
                              Scale(ctx, w_scale_, oc) / ctx.in<float>(in_.y_scale)[0];
          const int32_t zy = Load8(y_type_, ctx.inputs[in_.y_zp], 0);
          if (y_type_ == DataType::kInt8) {
            ctx.out<int8_t>(0)[out_index] = Requantize<int8_t>(real, zy);
          } else {
            ctx.out<uint8_t>(0)[out_index] = Requantize<uint8_t>(real, zy);
          }
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  const ConvInputs in_;
  const DataType x_type_, w_type_, y_type_;
  const Shape x_shape_, w_shape_;
  const ConvGeometry g_;
  const int64_t group_;
  const PerIndex w_zp_, w_scale_;
};

absl::StatusOr<std::unique_ptr<OpKernel>> BuildIntConv(KernelContext& ctx, ConvInputs in) {
  const ValueInfo& x = ctx.input(in.x);
  const ValueInfo& w = ctx.input(in.w);
  if (!IsQuantType(x.dtype) || !IsQuantType(w.dtype)) return ctx.Error("x and w must be 8-bit");
  if (x.shape.size() < 3 || w.shape.size() != x.shape.size()) return ctx.Error("bad ranks");
  const int64_t group = ctx.node->attributes.GetInt("group", 1);
  if (group <= 0 || x.shape[1] % group != 0 || w.shape[1] * group != x.shape[1] ||
      w.shape[0] % group != 0) {
    return ctx.Error("weights ", ShapeToString(w.shape), " do not match input ",
                     ShapeToString(x.shape), " with group ", group);
  }
  BRIGADE_ASSIGN_OR_RETURN(
      ConvGeometry g,
      ForwardGeometry(ctx, x.shape, std::vector<int64_t>(w.shape.begin() + 2, w.shape.end()),
                      false));
  Shape out{x.shape[0], w.shape[0]};
  out.insert(out.end(), g.output.begin(), g.output.end());
  BRIGADE_ASSIGN_OR_RETURN(PerIndex w_zp, Param(ctx, in.w_zp, w.shape[0]));
  w_zp.present = in.has_w_zp;
  PerIndex w_scale;
  DataType y_type = DataType::kInt32;
  if (in.qlinear) {
    BRIGADE_ASSIGN_OR_RETURN(w_scale, Param(ctx, in.w_scale, w.shape[0]));
    y_type = ctx.input(in.y_zp).dtype;
    if (!IsQuantType(y_type)) return ctx.Error("y_zero_point must be 8-bit");
    if (in.has_bias && (ctx.input(in.bias).dtype != DataType::kInt32 ||
                        ctx.input(in.bias).num_elements() != w.shape[0])) {
      return ctx.Error("B must be int32 [", w.shape[0], "]");
    }
  }
  ctx.SetOutput(0, y_type, out);
  return std::make_unique<IntConvKernel>(in, x.dtype, w.dtype, y_type, x.shape, w.shape,
                                         std::move(g), group, w_zp, w_scale);
}

absl::StatusOr<std::unique_ptr<OpKernel>> CreateConvInteger(KernelContext& ctx) {
  ConvInputs in;
  in.x = 0;
  in.w = 1;
  in.x_zp = 2;
  in.w_zp = 3;
  in.has_x_zp = ctx.has_input(2);
  in.has_w_zp = ctx.has_input(3);
  return BuildIntConv(ctx, in);
}

absl::StatusOr<std::unique_ptr<OpKernel>> CreateQLinearConv(KernelContext& ctx) {
  if (ctx.num_inputs() < 8) return ctx.Error("needs at least 8 inputs");
  BRIGADE_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> fast, TryDnnlQLinearConv(ctx));
  if (fast != nullptr) return fast;
  if (!ctx.node->attributes.GetStrings("post_ops").empty()) {
    return ctx.Unsupported("post-ops on a QLinearConv oneDNN cannot run");
  }
  if (ctx.input(0).layout.blocked) {
    // TakesBlockedQLinearConv() offered the blocked input for oneDNN, which then declined.
    return ctx.Unsupported("oneDNN declined an int8 convolution on a blocked input");
  }
  ConvInputs in;
  in.qlinear = true;
  in.x = 0;
  in.x_scale = 1;
  in.x_zp = 2;
  in.has_x_zp = true;
  in.w = 3;
  in.w_scale = 4;
  in.w_zp = 5;
  in.has_w_zp = true;
  in.y_scale = 6;
  in.y_zp = 7;
  in.bias = 8;
  in.has_bias = ctx.has_input(8);
  return BuildIntConv(ctx, in);
}

}  // namespace

void RegisterQLinearKernels(KernelRegistry* registry) {
  auto add = [&](const char* op, KernelFactory create) {
    KernelDef def;
    def.op_type = op;
    def.create = create;
    registry->Add(std::move(def));
  };
  add("MatMulInteger", &CreateMatMulInteger);
  add("QLinearMatMul", &CreateQLinearMatMul);
  add("ConvInteger", &CreateConvInteger);
  KernelDef conv;
  conv.op_type = "QLinearConv";
  conv.create = &CreateQLinearConv;
  conv.blocked_inputs = Inputs({0});
  conv.takes_blocked = &TakesBlockedQLinearConv;
  registry->Add(std::move(conv));
}

}  // namespace brigade::engine::onnx
