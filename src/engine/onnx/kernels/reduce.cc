// Reductions: ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare, ArgMax, ArgMin.
//
// Every reduction is computed as (outer, reduced, inner) blocks after merging the reduced axes;
// non-adjacent reduced axes are handled with an odometer over them. Floating-point sums
// accumulate in double so results do not depend on the thread split.

#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "core/status_macros.h"
#include "engine/onnx/kernels/kernel_util.h"
#include "engine/onnx/kernels/registry.h"

namespace brigade::engine::onnx {
namespace {

enum class ReduceOp { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

struct ReduceOpName {
  std::string_view name;
  ReduceOp op;
};
constexpr ReduceOpName kReduceOps[] = {
    {"ReduceSum", ReduceOp::kSum},
    {"ReduceMean", ReduceOp::kMean},
    {"ReduceMax", ReduceOp::kMax},
    {"ReduceMin", ReduceOp::kMin},
    {"ReduceProd", ReduceOp::kProd},
    {"ReduceL1", ReduceOp::kL1},
    {"ReduceL2", ReduceOp::kL2},
    {"ReduceLogSum", ReduceOp::kLogSum},
    {"ReduceLogSumExp", ReduceOp::kLogSumExp},
    {"ReduceSumSquare", ReduceOp::kSumSquare},
};

// Output index → input offsets: kept dims iterate the output, reduced dims are summed over.
struct ReducePlan {
  Shape kept_dims, kept_strides;        // input strides of the kept dims, output order
  Shape reduced_dims, reduced_strides;  // input strides of the reduced dims
  int64_t out_count = 1;
  int64_t reduce_count = 1;
};

ReducePlan MakePlan(const Shape& in, const std::vector<bool>& reduced) {
  ReducePlan plan;
  const Shape strides = Strides(in);
  for (size_t d = 0; d < in.size(); ++d) {
    if (reduced[d]) {
      plan.reduced_dims.push_back(in[d]);
      plan.reduced_strides.push_back(strides[d]);
      plan.reduce_count *= in[d];
    } else {
      plan.kept_dims.push_back(in[d]);
      plan.kept_strides.push_back(strides[d]);
      plan.out_count *= in[d];
    }
  }
  return plan;
}

// Calls f(offset) for every input element reduced into output element `o`.
template <typename F>
void ForReduced(const ReducePlan& plan, int64_t o, F f) {
  int64_t base = 0;
  for (size_t d = plan.kept_dims.size(); d-- > 0;) {
    base += (o % plan.kept_dims[d]) * plan.kept_strides[d];
    o /= plan.kept_dims[d];
  }
  const size_t r = plan.reduced_dims.size();
  if (r == 0) {
    f(base);
    return;
  }
  Shape index(r, 0);
  int64_t offset = base;
  for (int64_t k = 0; k < plan.reduce_count; ++k) {
    f(offset);
    for (size_t d = r; d-- > 0;) {
      ++index[d];
      offset += plan.reduced_strides[d];
      if (index[d] < plan.reduced_dims[d]) break;
      offset -= plan.reduced_strides[d] * index[d];
      index[d] = 0;
    }
  }
}

class ReduceKernel final : public OpKernel {
 public:
  ReduceKernel(ReduceOp op, DataType dtype, ReducePlan plan)
      : op_(op), dtype_(dtype), plan_(std::move(plan)) {}

  absl::Status Run(const RunContext& ctx) override {
    VisitNumeric(dtype_, [&]<typename T>() {
      if constexpr (!std::is_same_v<T, bool>) RunTyped<T>(ctx);
    });
    return absl::OkStatus();
  }

 private:
  template <typename T>
  void RunTyped(const RunContext& ctx) {
    using Acc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
    const T* in = ctx.in<T>(0);
    T* out = ctx.out<T>(0);
    const ReduceOp op = op_;
    const int64_t n = plan_.reduce_count;
    ParallelFor(ctx.threads, plan_.out_count, std::max<int64_t>(1, 4096 / std::max<int64_t>(n, 1)),
                [&](int64_t b, int64_t e) {
                  for (int64_t o = b; o < e; ++o) {
                    if (op == ReduceOp::kMax || op == ReduceOp::kMin) {
                      T best = op == ReduceOp::kMax ? std::numeric_limits<T>::lowest()
                                                    : std::numeric_limits<T>::max();
                      if constexpr (std::is_floating_point_v<T>) {
                        if (op == ReduceOp::kMax) best = -std::numeric_limits<T>::infinity();
                        if (op == ReduceOp::kMin) best = std::numeric_limits<T>::infinity();
                      }
                      ForReduced(plan_, o, [&](int64_t i) {
                        best = op == ReduceOp::kMax ? std::max(best, in[i]) : std::min(best, in[i]);
                      });
                      out[o] = best;
                      continue;
                    }
                    if (op == ReduceOp::kLogSumExp) {
                      double m = -std::numeric_limits<double>::infinity();
                      ForReduced(plan_, o,
                                 [&](int64_t i) { m = std::max(m, static_cast<double>(in[i])); });
                      double s = 0;
                      ForReduced(plan_, o,
                                 [&](int64_t i) { s += std::exp(static_cast<double>(in[i]) - m); });
                      out[o] = static_cast<T>(n == 0 ? -std::numeric_limits<double>::infinity()
                                                     : m + std::log(s));
                      continue;
                    }
                    Acc acc = op == ReduceOp::kProd ? Acc(1) : Acc(0);
                    ForReduced(plan_, o, [&](int64_t i) {
                      const Acc v = static_cast<Acc>(in[i]);
                      switch (op) {
                        case ReduceOp::kProd:
                          acc *= v;
                          break;
                        case ReduceOp::kL1:
                          acc += v < 0 ? -v : v;
                          break;
                        case ReduceOp::kL2:
                        case ReduceOp::kSumSquare:
                          acc += v * v;
                          break;
                        default:
                          acc += v;
                      }
                    });
                    double r = static_cast<double>(acc);
                    if (op == ReduceOp::kMean) r = n == 0 ? 0 : r / static_cast<double>(n);
                    if (op == ReduceOp::kL2) r = std::sqrt(r);
                    if (op == ReduceOp::kLogSum) r = std::log(r);
                    if constexpr (std::is_floating_point_v<T>) {
                      out[o] = static_cast<T>(r);
                    } else {
                      out[o] = op == ReduceOp::kMean ? static_cast<T>(r) : static_cast<T>(acc);
                      if (op == ReduceOp::kL2 || op == ReduceOp::kLogSum)
                        out[o] = static_cast<T>(r);
                    }
                  }
                });
  }

  const ReduceOp op_;
  const DataType dtype_;
  const ReducePlan plan_;
};

// Reduced axes from the `axes` attribute or input 1, as a mask; all axes when none are given
// (unless noop_with_empty_axes, which returns null for "no reduction").
absl::StatusOr<std::vector<bool>> ReducedAxes(const KernelContext& ctx, size_t rank, bool* noop) {
  std::vector<int64_t> axes(ctx.node->attributes.GetInts("axes").begin(),
                            ctx.node->attributes.GetInts("axes").end());
  if (ctx.has_input(1)) {
    BRIGADE_ASSIGN_OR_RETURN(axes, ConstantInts(ctx, 1));
  }
  std::vector<bool> mask(rank, axes.empty());
  *noop = axes.empty() && ctx.node->attributes.GetInt("noop_with_empty_axes", 0) != 0;
  if (*noop) mask.assign(rank, false);
  for (int64_t axis : axes) {
    BRIGADE_ASSIGN_OR_RETURN(int64_t a, NormalizeAxis(ctx, axis, static_cast<int64_t>(rank)));
    mask[static_cast<size_t>(a)] = true;
  }
  return mask;
}

absl::StatusOr<std::unique_ptr<OpKernel>> CreateReduce(KernelContext& ctx) {
  ReduceOp op = ReduceOp::kSum;
  for (const ReduceOpName& entry : kReduceOps) {
    if (entry.name == ctx.node->op_type) op = entry.op;
  }
  const ValueInfo& x = ctx.input(0);
  if (x.dtype == DataType::kBool || !VisitNumeric(x.dtype, []<typename T>() {})) {
    return ctx.Unsupported("element type ", DataTypeName(x.dtype));
  }
  bool noop = false;
  BRIGADE_ASSIGN_OR_RETURN(std::vector<bool> mask, ReducedAxes(ctx, x.shape.size(), &noop));
  const bool keep = ctx.node->attributes.GetInt("keepdims", 1) != 0;
  Shape out;
  for (size_t d = 0; d < x.shape.size(); ++d) {
    if (!mask[d]) {
      out.push_back(x.shape[d]);
    } else if (keep) {
      out.push_back(1);
    }
    if (mask[d] && x.shape[d] == 0 && (op == ReduceOp::kMax || op == ReduceOp::kMin)) {
      return ctx.Error("cannot reduce an empty axis with ", ctx.node->op_type);
    }
  }
  ctx.SetOutput(0, x.dtype, out);
  return std::make_unique<ReduceKernel>(op, x.dtype, MakePlan(x.shape, mask));
}

class ArgKernel final : public OpKernel {
 public:
  ArgKernel(DataType dtype, bool max, bool last, int64_t outer, int64_t dim, int64_t inner)
      : dtype_(dtype), max_(max), last_(last), outer_(outer), dim_(dim), inner_(inner) {}

  absl::Status Run(const RunContext& ctx) override {
    VisitNumeric(dtype_, [&]<typename T>() {
      if constexpr (!std::is_same_v<T, bool>) {
        const T* in = ctx.in<T>(0);
        int64_t* out = ctx.out<int64_t>(0);
        for (int64_t o = 0; o < outer_; ++o) {
          for (int64_t i = 0; i < inner_; ++i) {
            const T* base = in + o * dim_ * inner_ + i;
            int64_t best = 0;
            for (int64_t k = 1; k < dim_; ++k) {
              const T v = base[k * inner_], b = base[best * inner_];
              const bool better = max_ ? (last_ ? v >= b : v > b) : (last_ ? v <= b : v < b);
              if (better) best = k;
            }
            out[o * inner_ + i] = best;
          }
        }
      }
    });
    return absl::OkStatus();
  }

 private:
  const DataType dtype_;
  const bool max_, last_;
  const int64_t outer_, dim_, inner_;
};

absl::StatusOr<std::unique_ptr<OpKernel>> CreateArg(KernelContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  if (x.dtype == DataType::kBool || !VisitNumeric(x.dtype, []<typename T>() {})) {
    return ctx.Unsupported("element type ", DataTypeName(x.dtype));
  }
  const auto rank = static_cast<int64_t>(x.shape.size());
  BRIGADE_ASSIGN_OR_RETURN(int64_t axis,
                           NormalizeAxis(ctx, ctx.node->attributes.GetInt("axis", 0), rank));
  const auto a = static_cast<size_t>(axis);
  if (x.shape[a] == 0) return ctx.Error("cannot take ", ctx.node->op_type, " of an empty axis");
  Shape out = x.shape;
  if (ctx.node->attributes.GetInt("keepdims", 1) != 0) {
    out[a] = 1;
  } else {
    out.erase(out.begin() + axis);
  }
  ctx.SetOutput(0, DataType::kInt64, out);
  return std::make_unique<ArgKernel>(x.dtype, ctx.node->op_type == "ArgMax",
                                     ctx.node->attributes.GetInt("select_last_index", 0) != 0,
                                     DimProduct(x.shape, 0, a), x.shape[a],
                                     DimProduct(x.shape, a + 1, x.shape.size()));
}

}  // namespace

void RegisterReduceKernels(KernelRegistry* registry) {
  for (const ReduceOpName& entry : kReduceOps) {
    KernelDef def;
    def.op_type = std::string(entry.name);
    def.create = &CreateReduce;
    def.value_inputs = Inputs({1});
    registry->Add(std::move(def));
  }
  for (const char* name : {"ArgMax", "ArgMin"}) {
    KernelDef def;
    def.op_type = name;
    def.create = &CreateArg;
    registry->Add(std::move(def));
  }
}

}  // namespace brigade::engine::onnx
