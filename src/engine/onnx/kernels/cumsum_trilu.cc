// Running and triangular ops: CumSum (opsets 11, 14: exclusive, reverse, axis input) and Trilu
// (opset 14: upper/lower, k input).
//
// Both keep the input's shape. Their second inputs (CumSum's axis, Trilu's k) are registered as
// value inputs: the planner knows them when it prepares the kernel (an initializer, a constant,
// or a graph input joining the plan key), so the kernel's loop bounds are fixed in the factory
// and a bad axis fails the plan, naming the node. k is any int64: the comparison j - i <= k is
// done on in-range differences, so no k overflows.
// Thread safety: one kernel runs on one thread at a time, with up to `threads` threads inside.
// Run() allocates nothing.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>

#include "core/status_macros.h"
#include "engine/onnx/kernels/kernel_util.h"
#include "engine/onnx/kernels/registry.h"

namespace brigade::engine::onnx {
namespace {

// a + b, wrapping for integers: a running sum of the request's values may overflow, which would
// be undefined for the signed types.
template <typename T>
T CumSumAdd(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  } else {
    return a + b;
  }
}

// ---------------------------------------------------------------------------------------------
// CumSum: the input viewed as [outer, dim, inner]; each output row along `dim` is the running
// sum of the input's rows up to it (inclusive or not, from the front or the back).

class CumSumKernel final : public OpKernel {
 public:
  CumSumKernel(DataType dtype, int64_t outer, int64_t dim, int64_t inner, bool exclusive,
               bool reverse)
      : dtype_(dtype),
        outer_(outer),
        dim_(dim),
        inner_(inner),
        exclusive_(exclusive),
        reverse_(reverse) {}

  absl::Status Run(const RunContext& ctx) override {
    VisitNumeric(dtype_, [&]<typename T>() {
      if constexpr (!std::is_same_v<T, bool>) RunTyped<T>(ctx);
    });
    return absl::OkStatus();
  }

 private:
  template <typename T>
  void RunTyped(const RunContext& ctx) {
    const T* in = ctx.in<T>(0);
    T* out = ctx.out<T>(0);
    // Parallel over the independent [dim, inner] planes; each plane's running sum walks its rows
    // with the inner dimension contiguous, so the adds vectorize.
    const int64_t plane = dim_ * inner_;
    ParallelFor(ctx.threads, outer_, std::max<int64_t>(1, 16384 / std::max<int64_t>(plane, 1)),
                [&](int64_t b, int64_t e) {
                  for (int64_t o = b; o < e; ++o) {
                    const T* x = in + o * plane;
                    T* y = out + o * plane;
                    const T* prev_in = nullptr;
                    T* prev = nullptr;
                    for (int64_t s = 0; s < dim_; ++s) {
                      const int64_t row = reverse_ ? dim_ - 1 - s : s;
                      const T* xr = x + row * inner_;
                      T* yr = y + row * inner_;
                      if (prev == nullptr) {
                        if (exclusive_) {
                          std::fill(yr, yr + inner_, T(0));
                        } else {
                          std::copy(xr, xr + inner_, yr);
                        }
                      } else if (exclusive_) {
                        for (int64_t i = 0; i < inner_; ++i) yr[i] = CumSumAdd(prev[i], prev_in[i]);
                      } else {
                        for (int64_t i = 0; i < inner_; ++i) yr[i] = CumSumAdd(prev[i], xr[i]);
                      }
                      prev = yr;
                      prev_in = xr;
                    }
                  }
                });
  }

  const DataType dtype_;
  const int64_t outer_, dim_, inner_;
  const bool exclusive_, reverse_;
};

absl::StatusOr<std::unique_ptr<OpKernel>> CreateCumSum(KernelContext& ctx) {
  if (!ctx.has_input(0) || !ctx.has_input(1)) return ctx.Error("needs x and axis");
  const ValueInfo& x = ctx.input(0);
  BRIGADE_ASSIGN_OR_RETURN(std::vector<int64_t> axis_values, ConstantInts(ctx, 1));
  if (axis_values.size() != 1) {
    return ctx.Error("input 'axis' holds ", axis_values.size(), " values, not one");
  }
  const auto rank = static_cast<int64_t>(x.shape.size());
  if (rank == 0) return ctx.Error("x must have rank >= 1");
  BRIGADE_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx, axis_values[0], rank));
  if (x.dtype == DataType::kBool || !VisitNumeric(x.dtype, []<typename T>() {})) {
    return ctx.Unsupported("element type ", DataTypeName(x.dtype));
  }
  ctx.SetOutput(0, x.dtype, x.shape);
  const auto a = static_cast<size_t>(axis);
  const AttributeMap& attrs = ctx.node->attributes;
  return std::make_unique<CumSumKernel>(
      x.dtype, DimProduct(x.shape, 0, a), x.shape[a], DimProduct(x.shape, a + 1, x.shape.size()),
      attrs.GetInt("exclusive", 0) != 0, attrs.GetInt("reverse", 0) != 0);
}

// ---------------------------------------------------------------------------------------------
// Trilu: over the last two dims [rows, cols] of each matrix, keeps element (i, j) where
// j - i >= k (upper) or j - i <= k (lower) and zeroes the rest. Each row is one kept run and one
// or two zero runs, so rows are copied and cleared with memcpy/memset.

class TriluKernel final : public OpKernel {
 public:
  TriluKernel(size_t element, int64_t matrices, int64_t rows, int64_t cols, int64_t k, bool upper)
      : element_(element), matrices_(matrices), rows_(rows), cols_(cols), k_(k), upper_(upper) {}

  absl::Status Run(const RunContext& ctx) override {
    const size_t row_bytes = static_cast<size_t>(cols_) * element_;
    ParallelFor(ctx.threads, matrices_ * rows_,
                std::max<int64_t>(1, 16384 / static_cast<int64_t>(row_bytes + 1)),
                [&](int64_t b, int64_t e) {
                  for (int64_t r = b; r < e; ++r) {
                    const int64_t i = r % rows_;
                    // Kept columns [begin, end): upper keeps j >= i + k, lower j <= i + k.
                    // i + k is clamped to [-1, cols] first: |k| may be up to 2^63.
                    const int64_t edge =
                        k_ >= 0 ? (k_ > cols_ ? cols_ + 1 : std::min(i + k_, cols_ + 1))
                                : (k_ < -rows_ ? -1 : std::max<int64_t>(i + k_, -1));
                    const int64_t begin = upper_ ? std::clamp<int64_t>(edge, 0, cols_) : 0;
                    const int64_t end = upper_ ? cols_ : std::clamp<int64_t>(edge + 1, 0, cols_);
                    const std::byte* src = ctx.inputs[0] + static_cast<size_t>(r) * row_bytes;
                    std::byte* dst = ctx.outputs[0] + static_cast<size_t>(r) * row_bytes;
                    const auto at = [&](int64_t j) { return static_cast<size_t>(j) * element_; };
                    if (begin >= end) {
                      std::memset(dst, 0, row_bytes);
                      continue;
                    }
                    std::memset(dst, 0, at(begin));
                    if (dst != src) std::memcpy(dst + at(begin), src + at(begin), at(end - begin));
                    std::memset(dst + at(end), 0, at(cols_ - end));
                  }
                });
    return absl::OkStatus();
  }

 private:
  const size_t element_;
  const int64_t matrices_, rows_, cols_, k_;
  const bool upper_;
};

absl::StatusOr<std::unique_ptr<OpKernel>> CreateTrilu(KernelContext& ctx) {
  if (!ctx.has_input(0)) return ctx.Error("needs an input");
  const ValueInfo& x = ctx.input(0);
  if (x.shape.size() < 2) return ctx.Error("input must have rank >= 2, not ", x.shape.size());
  int64_t k = 0;
  if (ctx.has_input(1)) {
    BRIGADE_ASSIGN_OR_RETURN(std::vector<int64_t> k_values, ConstantInts(ctx, 1));
    if (k_values.size() != 1) return ctx.Error("input 'k' holds ", k_values.size(), " values");
    k = k_values[0];
  }
  if (DataTypeSize(x.dtype) == 0) return ctx.Unsupported("element type ", DataTypeName(x.dtype));
  ctx.SetOutput(0, x.dtype, x.shape);
  // Zeroing in place is as good as a copy: take the input's buffer when offered.
  if (ctx.input_reusable(0)) ctx.output_reuses_input = 0;
  const size_t rank = x.shape.size();
  return std::make_unique<TriluKernel>(DataTypeSize(x.dtype), DimProduct(x.shape, 0, rank - 2),
                                       x.shape[rank - 2], x.shape[rank - 1], k,
                                       ctx.node->attributes.GetInt("upper", 1) != 0);
}

}  // namespace

void RegisterCumSumTriluKernels(KernelRegistry* registry) {
  KernelDef cumsum;
  cumsum.op_type = "CumSum";
  cumsum.since_version = 11;
  cumsum.create = &CreateCumSum;
  cumsum.value_inputs = Inputs({1});
  registry->Add(cumsum);
  KernelDef trilu;
  trilu.op_type = "Trilu";
  trilu.since_version = 14;
  trilu.create = &CreateTrilu;
  trilu.value_inputs = Inputs({1});
  registry->Add(trilu);
}

}  // namespace brigade::engine::onnx
