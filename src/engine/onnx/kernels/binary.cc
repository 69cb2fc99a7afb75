// Broadcasting binary and variadic elementwise ops: arithmetic, comparison, logic, PRelu,
// Max/Min/Sum/Mean, and Where.
//
// Integer division and modulo by zero yield 0 instead of trapping (a request must never crash
// the server); floating-point follows IEEE.

#include <cmath>
#include <cstring>
#include <memory>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/status_macros.h"
#include "engine/onnx/kernels/broadcast.h"
#include "engine/onnx/kernels/channel_broadcast.h"
#include "engine/onnx/kernels/half.h"
#include "engine/onnx/kernels/kernel_util.h"
#include "engine/onnx/kernels/registry.h"

namespace brigade::engine::onnx {
namespace {

enum class BinaryOp {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kPow,
  kMod,
  kFMod,
  kEqual,
  kLess,
  kGreater,
  kLessOrEqual,
  kGreaterOrEqual,
  kAnd,
  kOr,
  kXor,
  kPRelu,
  kShiftLeft,
  kShiftRight,
  kMax,
  kMin,
  kSum,
  kMean,
};

bool IsComparison(BinaryOp op) {
  return op == BinaryOp::kEqual || op == BinaryOp::kLess || op == BinaryOp::kGreater ||
         op == BinaryOp::kLessOrEqual || op == BinaryOp::kGreaterOrEqual;
}
bool IsLogical(BinaryOp op) {
  return op == BinaryOp::kAnd || op == BinaryOp::kOr || op == BinaryOp::kXor;
}
bool IsVariadic(BinaryOp op) {
  return op == BinaryOp::kMax || op == BinaryOp::kMin || op == BinaryOp::kSum ||
         op == BinaryOp::kMean;
}

template <typename T>
T SafeDiv(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if (b == 0) return 0;
    if constexpr (std::is_signed_v<T>) {
      if (b == -1) return static_cast<T>(0 - a);  // avoids INT_MIN / -1
    }
  }
  return static_cast<T>(a / b);
}

template <typename T>
T IntMod(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if (b == 0) return 0;
    if constexpr (std::is_signed_v<T>) {
      if (b == -1) return 0;
      T r = static_cast<T>(a % b);
      if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
      return r;
    } else {
      return static_cast<T>(a % b);
    }
  } else {
    T r = std::fmod(a, b);
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  }
}

template <typename T>
T FMod(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if (b == 0) return 0;
    if constexpr (std::is_signed_v<T>) {
      if (b == -1) return 0;
    }
    return static_cast<T>(a % b);
  } else {
    return std::fmod(a, b);
  }
}

// Rows of `plan` with f(a, b) → out; inner loops specialized on the operands' inner strides.
template <typename A, typename B, typename O, typename F>
void RunRows(const BroadcastPlan& plan, const A* a, const B* b, O* out, int threads, F f) {
  const int64_t length = plan.row_length();
  const bool sa = plan.inner_stride(0) != 0;
  const bool sb = plan.inner_stride(1) != 0;
  ParallelFor(threads, plan.rows(), std::max<int64_t>(1, 16384 / std::max<int64_t>(length, 1)),
              [&](int64_t begin, int64_t end) {
                plan.ForRows(begin, end, [&](int64_t r, const auto& offsets) {
                  const A* pa = a + offsets[0];
                  const B* pb = b + offsets[1];
                  O* po = out + r * length;
                  if (sa && sb) {
                    for (int64_t i = 0; i < length; ++i) po[i] = f(pa[i], pb[i]);
                  } else if (sa) {
                    const B vb = *pb;
                    for (int64_t i = 0; i < length; ++i) po[i] = f(pa[i], vb);
                  } else if (sb) {
                    const A va = *pa;
                    for (int64_t i = 0; i < length; ++i) po[i] = f(va, pb[i]);
                  } else {
                    const O v = f(*pa, *pb);
                    for (int64_t i = 0; i < length; ++i) po[i] = v;
                  }
                });
              });
}

template <typename T>
bool Dispatch(BinaryOp op, const BroadcastPlan& plan, const std::byte* a, const std::byte* b,
              std::byte* out, int threads) {
  const T* x = reinterpret_cast<const T*>(a);
  const T* y = reinterpret_cast<const T*>(b);
  T* o = reinterpret_cast<T*>(out);
  bool* ob = reinterpret_cast<bool*>(out);
  switch (op) {
    case BinaryOp::kAdd:
    case BinaryOp::kSum:
    case BinaryOp::kMean:
      if constexpr (!std::is_same_v<T, bool>) {
        RunRows(plan, x, y, o, threads, [](T u, T v) { return static_cast<T>(u + v); });
        return true;
      }
      break;
    case BinaryOp::kSub:
      if constexpr (!std::is_same_v<T, bool>) {
        RunRows(plan, x, y, o, threads, [](T u, T v) { return static_cast<T>(u - v); });
        return true;
      }
      break;
    case BinaryOp::kMul:
      if constexpr (!std::is_same_v<T, bool>) {
        RunRows(plan, x, y, o, threads, [](T u, T v) { return static_cast<T>(u * v); });
        return true;
      }
      break;
    case BinaryOp::kDiv:
      if constexpr (!std::is_same_v<T, bool>) {
        RunRows(plan, x, y, o, threads, [](T u, T v) { return SafeDiv(u, v); });
        return true;
      }
      break;
    case BinaryOp::kMod:
      if constexpr (!std::is_same_v<T, bool>) {
        RunRows(plan, x, y, o, threads, [](T u, T v) { return IntMod(u, v); });
        return true;
      }
      break;
    case BinaryOp::kFMod:
      if constexpr (!std::is_same_v<T, bool>) {
        RunRows(plan, x, y, o, threads, [](T u, T v) { return FMod(u, v); });
        return true;
      }
      break;
    case BinaryOp::kMax:
      RunRows(plan, x, y, o, threads, [](T u, T v) {
        if constexpr (std::is_floating_point_v<T>) {
          if (std::isnan(u) || std::isnan(v)) return std::numeric_limits<T>::quiet_NaN();
        }
        return u < v ? v : u;
      });
      return true;
    case BinaryOp::kMin:
      RunRows(plan, x, y, o, threads, [](T u, T v) {
        if constexpr (std::is_floating_point_v<T>) {
          if (std::isnan(u) || std::isnan(v)) return std::numeric_limits<T>::quiet_NaN();
        }
        return v < u ? v : u;
      });
      return true;
    case BinaryOp::kPRelu:
      if constexpr (std::is_floating_point_v<T> || std::is_signed_v<T>) {
        RunRows(plan, x, y, o, threads,
                [](T u, T v) { return u < T(0) ? static_cast<T>(u * v) : u; });
        return true;
      }
      break;
    case BinaryOp::kShiftLeft:
      if constexpr (std::is_unsigned_v<T> && !std::is_same_v<T, bool>) {
        RunRows(plan, x, y, o, threads,
                [](T u, T v) { return v >= sizeof(T) * 8 ? T(0) : static_cast<T>(u << v); });
        return true;
      }
      break;
    case BinaryOp::kShiftRight:
      if constexpr (std::is_unsigned_v<T> && !std::is_same_v<T, bool>) {
        RunRows(plan, x, y, o, threads,
                [](T u, T v) { return v >= sizeof(T) * 8 ? T(0) : static_cast<T>(u >> v); });
        return true;
      }
      break;
    case BinaryOp::kEqual:
      RunRows(plan, x, y, ob, threads, [](T u, T v) { return u == v; });
      return true;
    case BinaryOp::kLess:
      RunRows(plan, x, y, ob, threads, [](T u, T v) { return u < v; });
      return true;
    case BinaryOp::kGreater:
      RunRows(plan, x, y, ob, threads, [](T u, T v) { return u > v; });
      return true;
    case BinaryOp::kLessOrEqual:
      RunRows(plan, x, y, ob, threads, [](T u, T v) { return u <= v; });
      return true;
    case BinaryOp::kGreaterOrEqual:
      RunRows(plan, x, y, ob, threads, [](T u, T v) { return u >= v; });
      return true;
    case BinaryOp::kAnd:
      if constexpr (std::is_same_v<T, bool>) {
        RunRows(plan, x, y, ob, threads, [](bool u, bool v) { return u && v; });
        return true;
      }
      break;
    case BinaryOp::kOr:
      if constexpr (std::is_same_v<T, bool>) {
        RunRows(plan, x, y, ob, threads, [](bool u, bool v) { return u || v; });
        return true;
      }
      break;
    case BinaryOp::kXor:
      if constexpr (std::is_same_v<T, bool>) {
        RunRows(plan, x, y, ob, threads, [](bool u, bool v) { return u != v; });
        return true;
      }
      break;
    case BinaryOp::kPow:
      break;  // handled with its own exponent type
  }
  return false;
}

// Pow: base of type T, exponent of any numeric type.
template <typename T>
bool DispatchPow(DataType exponent_type, const BroadcastPlan& plan, const std::byte* a,
                 const std::byte* b, std::byte* out, int threads) {
  if constexpr (std::is_same_v<T, bool>) {
    return false;
  } else {
    return VisitNumeric(exponent_type, [&]<typename E>() {
      if constexpr (!std::is_same_v<E, bool>) {
        RunRows(plan, reinterpret_cast<const T*>(a), reinterpret_cast<const E*>(b),
                reinterpret_cast<T*>(out), threads, [](T u, E v) {
                  if constexpr (std::is_same_v<T, float> && std::is_same_v<E, float>) {
                    return v == 2.0f ? u * u : std::pow(u, v);
                  } else {
                    return static_cast<T>(std::pow(static_cast<double>(u), static_cast<double>(v)));
                  }
                });
      }
    });
  }
}

class BinaryKernel final : public OpKernel {
 public:
  BinaryKernel(BinaryOp op, DataType dtype, DataType exponent_type, BroadcastPlan plan)
      : op_(op), dtype_(dtype), exponent_type_(exponent_type), plan_(std::move(plan)) {}

  absl::Status Run(const RunContext& ctx) override {
    VisitNumeric(dtype_, [&]<typename T>() {
      if (op_ == BinaryOp::kPow) {
        DispatchPow<T>(exponent_type_, plan_, ctx.inputs[0], ctx.inputs[1], ctx.outputs[0],
                       ctx.threads);
      } else {
        Dispatch<T>(op_, plan_, ctx.inputs[0], ctx.inputs[1], ctx.outputs[0], ctx.threads);
      }
    });
    return absl::OkStatus();
  }

 private:
  const BinaryOp op_;
  const DataType dtype_;
  const DataType exponent_type_;
  const BroadcastPlan plan_;
};

// Max/Min/Sum/Mean over N inputs: out = broadcast(in0), then out = f(out, in_k) in place.
class VariadicKernel final : public OpKernel {
 public:
  VariadicKernel(BinaryOp op, DataType dtype, BroadcastPlan first, std::vector<BroadcastPlan> rest,
                 int64_t count)
      : op_(op), dtype_(dtype), first_(std::move(first)), rest_(std::move(rest)), count_(count) {}

  absl::Status Run(const RunContext& ctx) override {
    VisitNumeric(dtype_, [&]<typename T>() {
      T* out = ctx.out<T>(0);
      RunRows(first_, ctx.in<T>(0), ctx.in<T>(0), out, ctx.threads, [](T u, T) { return u; });
      for (size_t k = 0; k < rest_.size(); ++k) {
        Dispatch<T>(op_, rest_[k], ctx.outputs[0], ctx.inputs[k + 1], ctx.outputs[0], ctx.threads);
      }
      if constexpr (!std::is_same_v<T, bool>) {
        if (op_ == BinaryOp::kMean) {
          const T n = static_cast<T>(rest_.size() + 1);
          for (int64_t i = 0; i < count_; ++i) out[i] = static_cast<T>(out[i] / n);
        }
      }
    });
    return absl::OkStatus();
  }

 private:
  const BinaryOp op_;
  const DataType dtype_;
  const BroadcastPlan first_;
  const std::vector<BroadcastPlan> rest_;
  const int64_t count_;
};

// fp16 Max/Min over N inputs. The result is always one of the inputs' values, so comparing
// them as float and copying the chosen 16 bits is exact without fp16 arithmetic; NaN wins, as
// for the other float types.
class HalfMinMaxKernel final : public OpKernel {
 public:
  HalfMinMaxKernel(bool max, BroadcastPlan first, std::vector<BroadcastPlan> rest)
      : max_(max), first_(std::move(first)), rest_(std::move(rest)) {}

  absl::Status Run(const RunContext& ctx) override {
    auto* out = ctx.out<uint16_t>(0);
    const auto* in0 = ctx.in<uint16_t>(0);
    RunRows(first_, in0, in0, out, ctx.threads, [](uint16_t u, uint16_t) { return u; });
    const bool max = max_;
    for (size_t k = 0; k < rest_.size(); ++k) {
      RunRows(rest_[k], out, ctx.in<uint16_t>(k + 1), out, ctx.threads,
              [max](uint16_t u, uint16_t v) {
                const float a = HalfToFloat(u), b = HalfToFloat(v);
                if (std::isnan(a)) return u;
                if (std::isnan(b)) return v;
                return (max ? b > a : b < a) ? v : u;
              });
    }
    return absl::OkStatus();
  }

 private:
  const bool max_;
  const BroadcastPlan first_;
  const std::vector<BroadcastPlan> rest_;
};

struct BinaryOpName {
  std::string_view name;
  BinaryOp op;
};
constexpr BinaryOpName kBinaryOps[] = {
    {"Add", BinaryOp::kAdd},
    {"Sub", BinaryOp::kSub},
    {"Mul", BinaryOp::kMul},
    {"Div", BinaryOp::kDiv},
    {"Pow", BinaryOp::kPow},
    {"Mod", BinaryOp::kMod},
    {"Equal", BinaryOp::kEqual},
    {"Less", BinaryOp::kLess},
    {"Greater", BinaryOp::kGreater},
    {"LessOrEqual", BinaryOp::kLessOrEqual},
    {"GreaterOrEqual", BinaryOp::kGreaterOrEqual},
    {"And", BinaryOp::kAnd},
    {"Or", BinaryOp::kOr},
    {"Xor", BinaryOp::kXor},
    {"PRelu", BinaryOp::kPRelu},
    {"BitShift", BinaryOp::kShiftLeft},
    {"Max", BinaryOp::kMax},
    {"Min", BinaryOp::kMin},
    {"Sum", BinaryOp::kSum},
    {"Mean", BinaryOp::kMean},
};

absl::StatusOr<std::unique_ptr<OpKernel>> CreateBinary(KernelContext& ctx) {
  BinaryOp op = BinaryOp::kAdd;
  for (const BinaryOpName& entry : kBinaryOps) {
    if (entry.name == ctx.node->op_type) op = entry.op;
  }
  if (ctx.num_inputs() == 0 || !ctx.has_input(0)) return ctx.Error("needs inputs");
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) return ctx.Error("input ", i, " is missing");
  }
  const DataType dtype = ctx.input(0).dtype;
  const bool half_min_max =
      dtype == DataType::kFp16 && (op == BinaryOp::kMax || op == BinaryOp::kMin);
  if (!half_min_max && !VisitNumeric(dtype, []<typename T>() {})) {
    return ctx.Unsupported("element type ", DataTypeName(dtype), " is not supported");
  }
  if (op == BinaryOp::kMod && ctx.node->attributes.GetInt("fmod", 0) != 0) op = BinaryOp::kFMod;
  if (op == BinaryOp::kMod && (dtype == DataType::kFp32 || dtype == DataType::kFp64)) {
    return ctx.Error("floating-point Mod requires fmod=1");
  }
  if (op == BinaryOp::kShiftLeft && ctx.node->attributes.GetString("direction", "") == "RIGHT") {
    op = BinaryOp::kShiftRight;
  }
  if (IsLogical(op) && dtype != DataType::kBool) return ctx.Error("logical ops take bool inputs");
  if ((op == BinaryOp::kAdd || op == BinaryOp::kMul) && ctx.num_inputs() == 2 &&
      (ctx.input(0).layout.blocked || ctx.input(1).layout.blocked)) {
    return CreateChannelBroadcast(ctx, op == BinaryOp::kMul);
  }

  if (IsVariadic(op)) {
    if (dtype == DataType::kBool) return ctx.Unsupported("bool inputs are not supported");
    Shape out = ctx.input(0).shape;
    for (size_t i = 1; i < ctx.num_inputs(); ++i) {
      if (ctx.input(i).dtype != dtype) return ctx.Error("inputs must share one element type");
      BRIGADE_ASSIGN_OR_RETURN(out, BroadcastShapes(ctx, out, ctx.input(i).shape));
    }
    ctx.SetOutput(0, dtype, out);
    const Shape first_shapes[] = {ctx.input(0).shape, ctx.input(0).shape};
    BroadcastPlan first(out, first_shapes);
    std::vector<BroadcastPlan> rest;
    for (size_t i = 1; i < ctx.num_inputs(); ++i) {
      const Shape shapes[] = {out, ctx.input(i).shape};
      rest.emplace_back(out, shapes);
    }
    if (half_min_max) {
      return std::make_unique<HalfMinMaxKernel>(op == BinaryOp::kMax, std::move(first),
                                                std::move(rest));
    }
    int64_t count = 1;
    for (int64_t d : out) count *= d;
    return std::make_unique<VariadicKernel>(op, dtype, std::move(first), std::move(rest), count);
  }

  if (ctx.num_inputs() != 2 || !ctx.has_input(1)) return ctx.Error("needs two inputs");
  const DataType other = ctx.input(1).dtype;
  if (op != BinaryOp::kPow && other != dtype) {
    return ctx.Error("inputs have different element types ", DataTypeName(dtype), " and ",
                     DataTypeName(other));
  }
  BRIGADE_ASSIGN_OR_RETURN(Shape out, BroadcastShapes(ctx, ctx.input(0).shape, ctx.input(1).shape));
  if (op == BinaryOp::kPRelu && out != ctx.input(0).shape) {
    return ctx.Error("slope ", ShapeToString(ctx.input(1).shape), " does not broadcast to ",
                     ShapeToString(ctx.input(0).shape));
  }
  const Shape shapes[] = {ctx.input(0).shape, ctx.input(1).shape};
  BroadcastPlan plan(out, shapes);
  const bool to_bool = IsComparison(op) || IsLogical(op);
  ctx.SetOutput(0, to_bool ? DataType::kBool : dtype, out);
  // Check once here that the type combination is implemented, so Run cannot silently skip.
  if (op != BinaryOp::kPow) {
    bool ok = false;
    VisitNumeric(dtype, [&]<typename T>() {
      ok = Dispatch<T>(op, BroadcastPlan(Shape{0}, std::span<const Shape>()), nullptr, nullptr,
                       nullptr, 1);
    });
    if (!ok) return ctx.Unsupported("element type ", DataTypeName(dtype), " is not supported");
  } else if (dtype == DataType::kBool || other == DataType::kBool) {
    return ctx.Unsupported("bool Pow is not supported");
  }
  return std::make_unique<BinaryKernel>(op, dtype, other, std::move(plan));
}

// Where(condition, x, y).
class WhereKernel final : public OpKernel {
 public:
  WhereKernel(DataType dtype, BroadcastPlan plan) : dtype_(dtype), plan_(std::move(plan)) {}

  absl::Status Run(const RunContext& ctx) override {
    const size_t size = DataTypeSize(dtype_);
    const bool* cond = ctx.in<bool>(0);
    const std::byte* x = ctx.inputs[1];
    const std::byte* y = ctx.inputs[2];
    std::byte* out = ctx.outputs[0];
    const int64_t length = plan_.row_length();
    const int64_t sc = plan_.inner_stride(0), sx = plan_.inner_stride(1),
                  sy = plan_.inner_stride(2);
    ParallelFor(ctx.threads, plan_.rows(), std::max<int64_t>(1, 16384 / length),
                [&](int64_t begin, int64_t end) {
                  plan_.ForRows(begin, end, [&](int64_t r, const auto& o) {
                    std::byte* dst = out + static_cast<size_t>(r * length) * size;
                    for (int64_t i = 0; i < length; ++i) {
                      const bool c = cond[o[0] + i * sc];
                      const std::byte* src = c ? x + static_cast<size_t>(o[1] + i * sx) * size
                                               : y + static_cast<size_t>(o[2] + i * sy) * size;
                      std::memcpy(dst + static_cast<size_t>(i) * size, src, size);
                    }
                  });
                });
    return absl::OkStatus();
  }

 private:
  const DataType dtype_;
  const BroadcastPlan plan_;
};

absl::StatusOr<std::unique_ptr<OpKernel>> CreateWhere(KernelContext& ctx) {
  if (ctx.num_inputs() != 3 || !ctx.has_input(0) || !ctx.has_input(1) || !ctx.has_input(2)) {
    return ctx.Error("needs three inputs");
  }
  if (ctx.input(0).dtype != DataType::kBool) return ctx.Error("condition must be bool");
  const DataType dtype = ctx.input(1).dtype;
  if (ctx.input(2).dtype != dtype || DataTypeSize(dtype) == 0) {
    return ctx.Error("x and y must share one fixed-size element type");
  }
  BRIGADE_ASSIGN_OR_RETURN(Shape out, BroadcastShapes(ctx, ctx.input(0).shape, ctx.input(1).shape));
  BRIGADE_ASSIGN_OR_RETURN(out, BroadcastShapes(ctx, out, ctx.input(2).shape));
  const Shape shapes[] = {ctx.input(0).shape, ctx.input(1).shape, ctx.input(2).shape};
  ctx.SetOutput(0, dtype, out);
  return std::make_unique<WhereKernel>(dtype, BroadcastPlan(out, shapes));
}

}  // namespace

void RegisterBinaryKernels(KernelRegistry* registry) {
  for (const BinaryOpName& entry : kBinaryOps) {
    KernelDef def;
    def.op_type = std::string(entry.name);
    def.create = &CreateBinary;
    if (entry.op == BinaryOp::kAdd || entry.op == BinaryOp::kMul) {
      def.blocked_inputs = Inputs({0, 1});
      def.takes_blocked = &TakesBlockedChannelOperand;
    }
    registry->Add(std::move(def));
  }
  KernelDef where;
  where.op_type = "Where";
  where.create = &CreateWhere;
  registry->Add(std::move(where));
}

}  // namespace brigade::engine::onnx
