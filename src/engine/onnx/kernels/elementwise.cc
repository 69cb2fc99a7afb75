// Unary elementwise ops: activations and math functions.
//
// fp32 inputs with a oneDNN eltwise algorithm run as a oneDNN primitive (JIT-vectorized
// transcendental functions, and it accepts blocked layouts, so an activation between two
// convolutions needs no reorder); everything else runs as a typed loop.

#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <string_view>

#include "core/status_macros.h"
#include "engine/onnx/kernels/dnnl_util.h"
#include "engine/onnx/kernels/kernel_util.h"
#include "engine/onnx/kernels/registry.h"

namespace brigade::engine::onnx {
namespace {

enum class UnaryOp {
  kRelu,
  kLeakyRelu,
  kElu,
  kSelu,
  kCelu,
  kThresholdedRelu,
  kHardSigmoid,
  kHardSwish,
  kSoftplus,
  kSoftsign,
  kSigmoid,
  kTanh,
  kErf,
  kGelu,
  kSwish,
  kExp,
  kLog,
  kSqrt,
  kReciprocal,
  kFloor,
  kCeil,
  kRound,
  kSin,
  kCos,
  kTan,
  kAsin,
  kAcos,
  kAtan,
  kSinh,
  kCosh,
  kAsinh,
  kAcosh,
  kAtanh,
  kAbs,
  kNeg,
  kSign,
  kNot,
  kIsNaN,
  kIsInf,
  kClip,
};

struct UnaryOpInfo {
  std::string_view name;
  UnaryOp op;
  // Which element types the op takes: floats only, any signed numeric, or any numeric.
  enum class Types { kFloat, kSigned, kNumeric, kBool } types;
};

constexpr UnaryOpInfo kUnaryOps[] = {
    {"Relu", UnaryOp::kRelu, UnaryOpInfo::Types::kSigned},
    {"LeakyRelu", UnaryOp::kLeakyRelu, UnaryOpInfo::Types::kFloat},
    {"Elu", UnaryOp::kElu, UnaryOpInfo::Types::kFloat},
    {"Selu", UnaryOp::kSelu, UnaryOpInfo::Types::kFloat},
    {"Celu", UnaryOp::kCelu, UnaryOpInfo::Types::kFloat},
    {"ThresholdedRelu", UnaryOp::kThresholdedRelu, UnaryOpInfo::Types::kFloat},
    {"HardSigmoid", UnaryOp::kHardSigmoid, UnaryOpInfo::Types::kFloat},
    {"HardSwish", UnaryOp::kHardSwish, UnaryOpInfo::Types::kFloat},
    {"Softplus", UnaryOp::kSoftplus, UnaryOpInfo::Types::kFloat},
    {"Softsign", UnaryOp::kSoftsign, UnaryOpInfo::Types::kFloat},
    {"Sigmoid", UnaryOp::kSigmoid, UnaryOpInfo::Types::kFloat},
    {"Tanh", UnaryOp::kTanh, UnaryOpInfo::Types::kFloat},
    {"Erf", UnaryOp::kErf, UnaryOpInfo::Types::kFloat},
    {"Gelu", UnaryOp::kGelu, UnaryOpInfo::Types::kFloat},
    // ai.brigade.Swish(x) = x · Sigmoid(x) (SiLU), what SwishFusion makes of Mul(x, Sigmoid(x)).
    {"Swish", UnaryOp::kSwish, UnaryOpInfo::Types::kFloat},
    {"Exp", UnaryOp::kExp, UnaryOpInfo::Types::kFloat},
    {"Log", UnaryOp::kLog, UnaryOpInfo::Types::kFloat},
    {"Sqrt", UnaryOp::kSqrt, UnaryOpInfo::Types::kFloat},
    {"Reciprocal", UnaryOp::kReciprocal, UnaryOpInfo::Types::kFloat},
    {"Floor", UnaryOp::kFloor, UnaryOpInfo::Types::kFloat},
    {"Ceil", UnaryOp::kCeil, UnaryOpInfo::Types::kFloat},
    {"Round", UnaryOp::kRound, UnaryOpInfo::Types::kFloat},
    {"Sin", UnaryOp::kSin, UnaryOpInfo::Types::kFloat},
    {"Cos", UnaryOp::kCos, UnaryOpInfo::Types::kFloat},
    {"Tan", UnaryOp::kTan, UnaryOpInfo::Types::kFloat},
    {"Asin", UnaryOp::kAsin, UnaryOpInfo::Types::kFloat},
    {"Acos", UnaryOp::kAcos, UnaryOpInfo::Types::kFloat},
    {"Atan", UnaryOp::kAtan, UnaryOpInfo::Types::kFloat},
    {"Sinh", UnaryOp::kSinh, UnaryOpInfo::Types::kFloat},
    {"Cosh", UnaryOp::kCosh, UnaryOpInfo::Types::kFloat},
    {"Asinh", UnaryOp::kAsinh, UnaryOpInfo::Types::kFloat},
    {"Acosh", UnaryOp::kAcosh, UnaryOpInfo::Types::kFloat},
    {"Atanh", UnaryOp::kAtanh, UnaryOpInfo::Types::kFloat},
    {"Abs", UnaryOp::kAbs, UnaryOpInfo::Types::kNumeric},
    {"Neg", UnaryOp::kNeg, UnaryOpInfo::Types::kSigned},
    {"Sign", UnaryOp::kSign, UnaryOpInfo::Types::kNumeric},
    {"Not", UnaryOp::kNot, UnaryOpInfo::Types::kBool},
    {"IsNaN", UnaryOp::kIsNaN, UnaryOpInfo::Types::kFloat},
    {"IsInf", UnaryOp::kIsInf, UnaryOpInfo::Types::kFloat},
    {"Clip", UnaryOp::kClip, UnaryOpInfo::Types::kNumeric},
};

const UnaryOpInfo* FindOp(std::string_view name) {
  for (const UnaryOpInfo& info : kUnaryOps) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

bool TypeAllowed(UnaryOpInfo::Types types, DataType dtype) {
  const bool is_float = dtype == DataType::kFp32 || dtype == DataType::kFp64;
  const bool is_signed = is_float || dtype == DataType::kInt8 || dtype == DataType::kInt16 ||
                         dtype == DataType::kInt32 || dtype == DataType::kInt64;
  switch (types) {
    case UnaryOpInfo::Types::kFloat:
      return is_float;
    case UnaryOpInfo::Types::kSigned:
      return is_signed;
    case UnaryOpInfo::Types::kNumeric:
      return dtype != DataType::kBool && dtype != DataType::kBytes && DataTypeSize(dtype) > 0 &&
             dtype != DataType::kFp16 && dtype != DataType::kBf16;
    case UnaryOpInfo::Types::kBool:
      return dtype == DataType::kBool;
  }
  return false;
}

struct Params {
  double alpha = 0;
  double beta = 0;
  double gamma = 0;
  // Clip bounds known at plan time; when absent Clip reads its inputs at run time.
  std::optional<double> clip_min, clip_max;
  bool clip_min_runtime = false, clip_max_runtime = false;
  int64_t detect_positive = 1, detect_negative = 1;
};

// The scalar function of `op` on a value of type T (computed in double for integer-safe
// floating math where T is double, float otherwise).
template <typename T>
T Apply(UnaryOp op, T x, const Params& p) {
  using F = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const F v = static_cast<F>(x);
  const F alpha = static_cast<F>(p.alpha);
  const F beta = static_cast<F>(p.beta);
  switch (op) {
    case UnaryOp::kRelu:
      return x > T(0) ? x : T(0);
    case UnaryOp::kLeakyRelu:
      return static_cast<T>(v >= 0 ? v : alpha * v);
    case UnaryOp::kElu:
      return static_cast<T>(v >= 0 ? v : alpha * (std::exp(v) - 1));
    case UnaryOp::kSelu:
      return static_cast<T>(static_cast<F>(p.gamma) * (v > 0 ? v : alpha * (std::exp(v) - 1)));
    case UnaryOp::kCelu:
      return static_cast<T>(std::max(F(0), v) + std::min(F(0), alpha * (std::exp(v / alpha) - 1)));
    case UnaryOp::kThresholdedRelu:
      return static_cast<T>(v > alpha ? v : F(0));
    case UnaryOp::kHardSigmoid:
      return static_cast<T>(std::max(F(0), std::min(F(1), alpha * v + beta)));
    case UnaryOp::kHardSwish:
      return static_cast<T>(v * std::max(F(0), std::min(F(1), v / F(6) + F(0.5))));
    case UnaryOp::kSoftplus:
      return static_cast<T>(v > F(20) ? v : std::log1p(std::exp(v)));
    case UnaryOp::kSoftsign:
      return static_cast<T>(v / (F(1) + std::abs(v)));
    case UnaryOp::kSigmoid:
      return static_cast<T>(v >= 0 ? F(1) / (F(1) + std::exp(-v))
                                   : std::exp(v) / (F(1) + std::exp(v)));
    case UnaryOp::kTanh:
      return static_cast<T>(std::tanh(v));
    case UnaryOp::kErf:
      return static_cast<T>(std::erf(v));
    case UnaryOp::kGelu:
      return static_cast<T>(F(0.5) * v * (F(1) + std::erf(v * F(0.70710678118654752440))));
    case UnaryOp::kSwish:
      return static_cast<T>(v >= 0 ? v / (F(1) + std::exp(-v))
                                   : v * std::exp(v) / (F(1) + std::exp(v)));
    case UnaryOp::kExp:
      return static_cast<T>(std::exp(v));
    case UnaryOp::kLog:
      return static_cast<T>(std::log(v));
    case UnaryOp::kSqrt:
      return static_cast<T>(std::sqrt(v));
    case UnaryOp::kReciprocal:
      return static_cast<T>(F(1) / v);
    case UnaryOp::kFloor:
      return static_cast<T>(std::floor(v));
    case UnaryOp::kCeil:
      return static_cast<T>(std::ceil(v));
    case UnaryOp::kRound:
      return static_cast<T>(std::nearbyint(v));
    case UnaryOp::kSin:
      return static_cast<T>(std::sin(v));
    case UnaryOp::kCos:
      return static_cast<T>(std::cos(v));
    case UnaryOp::kTan:
      return static_cast<T>(std::tan(v));
    case UnaryOp::kAsin:
      return static_cast<T>(std::asin(v));
    case UnaryOp::kAcos:
      return static_cast<T>(std::acos(v));
    case UnaryOp::kAtan:
      return static_cast<T>(std::atan(v));
    case UnaryOp::kSinh:
      return static_cast<T>(std::sinh(v));
    case UnaryOp::kCosh:
      return static_cast<T>(std::cosh(v));
    case UnaryOp::kAsinh:
      return static_cast<T>(std::asinh(v));
    case UnaryOp::kAcosh:
      return static_cast<T>(std::acosh(v));
    case UnaryOp::kAtanh:
      return static_cast<T>(std::atanh(v));
    case UnaryOp::kAbs:
      if constexpr (std::is_unsigned_v<T>) {
        return x;
      } else {
        return x < T(0) ? static_cast<T>(-x) : x;
      }
    case UnaryOp::kNeg:
      if constexpr (std::is_unsigned_v<T>) {
        return x;
      } else {
        return static_cast<T>(-x);
      }
    case UnaryOp::kSign:
      return static_cast<T>((x > T(0)) - (x < T(0)));
    case UnaryOp::kNot:
    case UnaryOp::kIsNaN:
    case UnaryOp::kIsInf:
    case UnaryOp::kClip:
      return x;  // handled by dedicated loops
  }
  return x;
}

// Generic typed loop.
class LoopKernel final : public OpKernel {
 public:
  LoopKernel(UnaryOp op, Params params, DataType dtype, int64_t count)
      : op_(op), params_(params), dtype_(dtype), count_(count) {}

  absl::Status Run(const RunContext& ctx) override {
    const std::byte* in = ctx.inputs[0];
    std::byte* out = ctx.outputs[0];
    if (op_ == UnaryOp::kNot) {
      Map<bool, bool>(ctx, in, out, [](bool x) { return !x; });
      return absl::OkStatus();
    }
    if (op_ == UnaryOp::kIsNaN || op_ == UnaryOp::kIsInf) {
      const bool pos = params_.detect_positive != 0, neg = params_.detect_negative != 0;
      const bool nan = op_ == UnaryOp::kIsNaN;
      VisitNumeric(dtype_, [&]<typename T>() {
        if constexpr (std::is_floating_point_v<T>) {
          Map<T, bool>(ctx, in, out, [=](T x) {
            if (nan) return std::isnan(x);
            return std::isinf(x) && ((x > 0 && pos) || (x < 0 && neg));
          });
        }
      });
      return absl::OkStatus();
    }
    if (op_ == UnaryOp::kClip) return RunClip(ctx);
    VisitNumeric(dtype_, [&]<typename T>() {
      if constexpr (!std::is_same_v<T, bool>) {
        const UnaryOp op = op_;
        const Params p = params_;
        Map<T, T>(ctx, in, out, [op, p](T x) { return Apply<T>(op, x, p); });
      }
    });
    return absl::OkStatus();
  }

 private:
  template <typename In, typename Out, typename F>
  void Map(const RunContext& ctx, const std::byte* in_bytes, std::byte* out_bytes, F f) {
    const In* in = reinterpret_cast<const In*>(in_bytes);
    Out* out = reinterpret_cast<Out*>(out_bytes);
    ParallelFor(ctx.threads, count_, 1 << 14, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) out[i] = f(in[i]);
    });
  }

  absl::Status RunClip(const RunContext& ctx) {
    VisitNumeric(dtype_, [&]<typename T>() {
      if constexpr (!std::is_same_v<T, bool>) {
        T lo = std::numeric_limits<T>::lowest();
        T hi = std::numeric_limits<T>::max();
        if (params_.clip_min.has_value()) lo = static_cast<T>(*params_.clip_min);
        if (params_.clip_max.has_value()) hi = static_cast<T>(*params_.clip_max);
        if (params_.clip_min_runtime) lo = *ctx.in<T>(1);
        if (params_.clip_max_runtime) hi = *ctx.in<T>(2);
        Map<T, T>(ctx, ctx.inputs[0], ctx.outputs[0],
                  [lo, hi](T x) { return x < lo ? lo : (x > hi ? hi : x); });
      }
    });
    return absl::OkStatus();
  }

  const UnaryOp op_;
  const Params params_;
  const DataType dtype_;
  const int64_t count_;
};

// The oneDNN algorithm computing `op` exactly as ONNX defines it, with its alpha and beta.
struct DnnlAlg {
  dnnl::algorithm alg;
  float alpha = 0;
  float beta = 0;
};

std::optional<DnnlAlg> DnnlAlgFor(UnaryOp op, const Params& p) {
  using a = dnnl::algorithm;
  switch (op) {
    case UnaryOp::kRelu:
      return DnnlAlg{a::eltwise_relu, 0, 0};
    case UnaryOp::kLeakyRelu:
      return DnnlAlg{a::eltwise_relu, static_cast<float>(p.alpha), 0};
    case UnaryOp::kElu:
      return DnnlAlg{a::eltwise_elu, static_cast<float>(p.alpha), 0};
    case UnaryOp::kSigmoid:
      return DnnlAlg{a::eltwise_logistic, 0, 0};
    case UnaryOp::kTanh:
      return DnnlAlg{a::eltwise_tanh, 0, 0};
    case UnaryOp::kGelu:
      return DnnlAlg{a::eltwise_gelu_erf, 0, 0};
    case UnaryOp::kSwish:
      return DnnlAlg{a::eltwise_swish, 1, 0};
    case UnaryOp::kExp:
      return DnnlAlg{a::eltwise_exp, 0, 0};
    case UnaryOp::kSqrt:
      return DnnlAlg{a::eltwise_sqrt, 0, 0};
    case UnaryOp::kAbs:
      return DnnlAlg{a::eltwise_abs, 0, 0};
    case UnaryOp::kHardSwish:
      return DnnlAlg{a::eltwise_hardswish, 0, 0};
    case UnaryOp::kNeg:
      return DnnlAlg{a::eltwise_linear, -1, 0};
    case UnaryOp::kClip:
      if (p.clip_min_runtime || p.clip_max_runtime) return std::nullopt;
      return DnnlAlg{a::eltwise_clip,
                     static_cast<float>(p.clip_min.value_or(-std::numeric_limits<float>::max())),
                     static_cast<float>(p.clip_max.value_or(std::numeric_limits<float>::max()))};
    default:
      return std::nullopt;
  }
}

absl::StatusOr<std::unique_ptr<OpKernel>> CreateUnary(KernelContext& ctx) {
  const UnaryOpInfo* info = FindOp(ctx.node->op_type);
  if (info == nullptr) return ctx.Unsupported("not a unary op");
  const ValueInfo& x = ctx.input(0);
  if (!TypeAllowed(info->types, x.dtype)) {
    return ctx.Unsupported("element type ", DataTypeName(x.dtype), " is not supported");
  }
  const AttributeMap& attrs = ctx.node->attributes;
  Params p;
  switch (info->op) {
    case UnaryOp::kLeakyRelu:
      p.alpha = attrs.GetFloat("alpha", 0.01f);
      break;
    case UnaryOp::kElu:
    case UnaryOp::kCelu:
    case UnaryOp::kThresholdedRelu:
      p.alpha = attrs.GetFloat("alpha", 1.0f);
      break;
    case UnaryOp::kSelu:
      p.alpha = attrs.GetFloat("alpha", 1.67326319217681884765625f);
      p.gamma = attrs.GetFloat("gamma", 1.05070102214813232421875f);
      break;
    case UnaryOp::kHardSigmoid:
      p.alpha = attrs.GetFloat("alpha", 0.2f);
      p.beta = attrs.GetFloat("beta", 0.5f);
      break;
    case UnaryOp::kIsInf:
      p.detect_positive = attrs.GetInt("detect_positive", 1);
      p.detect_negative = attrs.GetInt("detect_negative", 1);
      break;
    case UnaryOp::kClip:
      for (size_t i = 1; i <= 2; ++i) {
        if (!ctx.has_input(i)) continue;
        if (ctx.input(i).dtype != x.dtype || ctx.input(i).num_elements() != 1) {
          return ctx.Error("min/max must be scalars of the input's type");
        }
        if (ctx.input(i).constant != nullptr) {
          BRIGADE_ASSIGN_OR_RETURN(double v, ConstantScalar(ctx, i));
          (i == 1 ? p.clip_min : p.clip_max) = v;
        } else {
          (i == 1 ? p.clip_min_runtime : p.clip_max_runtime) = true;
        }
      }
      break;
    default:
      break;
  }
  const DataType out_type =
      info->op == UnaryOp::kIsNaN || info->op == UnaryOp::kIsInf ? DataType::kBool : x.dtype;
  ctx.SetOutput(0, out_type, x.shape);
  if (ctx.shape_only) return std::unique_ptr<OpKernel>();

  const std::optional<DnnlAlg> alg = DnnlAlgFor(info->op, p);
  if (x.dtype == DataType::kFp32 && alg.has_value() && x.num_elements() > 0) {
    BRIGADE_ASSIGN_OR_RETURN(dnnl::memory::desc desc, DescOf(x));
    DnnlCall call;
    BRIGADE_RETURN_IF_ERROR(CatchDnnl(ctx, "eltwise", [&] {
      dnnl::eltwise_forward::primitive_desc pd(
          dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference, alg->alg, desc,
                                      alg->alpha, alg->beta),
          *ctx.engine);
      call.set_primitive(dnnl::eltwise_forward(pd));
      call.AddArg(DNNL_ARG_SRC, desc, *ctx.engine);
      call.AddArg(DNNL_ARG_DST, desc, *ctx.engine);
    }));
    ctx.outputs[0].layout = x.layout;
    return std::make_unique<DnnlUnaryKernel>(std::move(call));
  }
  if (x.layout.blocked) return ctx.Error("blocked layout reached a plain-only kernel");
  return std::make_unique<LoopKernel>(info->op, p, x.dtype, x.num_elements());
}

}  // namespace

void RegisterElementwiseKernels(KernelRegistry* registry) {
  for (const UnaryOpInfo& info : kUnaryOps) {
    KernelDef def;
    def.op_type = std::string(info.name);
    def.create = &CreateUnary;
    if (info.op == UnaryOp::kGelu || info.op == UnaryOp::kSwish) {
      def.domain = std::string(kBrigadeDomain);
    }
    // Ops oneDNN runs in place of any layout.
    switch (info.op) {
      case UnaryOp::kRelu:
      case UnaryOp::kLeakyRelu:
      case UnaryOp::kSigmoid:
      case UnaryOp::kTanh:
      case UnaryOp::kHardSwish:
      case UnaryOp::kSwish:
      case UnaryOp::kClip:
      case UnaryOp::kElu:
        def.blocked_inputs = Inputs({0});
        break;
      default:
        break;
    }
    registry->Add(std::move(def));
  }
}

}  // namespace brigade::engine::onnx
