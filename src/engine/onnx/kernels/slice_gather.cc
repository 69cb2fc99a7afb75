// Indexing ops: Slice, Gather, GatherElements, GatherND, TopK.
//
// Indices arrive at run time, so Gather, GatherElements and GatherND check every index and fail
// the run (not the process) on one out of range.

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "core/status_macros.h"
#include "engine/onnx/kernels/kernel_util.h"
#include "engine/onnx/kernels/registry.h"

namespace brigade::engine::onnx {
namespace {

// ---------------------------------------------------------------------------------------------
// Slice

class SliceKernel final : public OpKernel {
 public:
  SliceKernel(size_t element, Shape out, Shape in_strides, Shape starts, Shape steps)
      : element_(element),
        out_(std::move(out)),
        in_strides_(std::move(in_strides)),
        starts_(std::move(starts)),
        steps_(std::move(steps)) {}

  absl::Status Run(const RunContext& ctx) override {
    const size_t rank = out_.size();
    const int64_t inner = out_[rank - 1];
    const int64_t inner_step = steps_[rank - 1] * in_strides_[rank - 1];
    int64_t rows = 1;
    for (size_t d = 0; d + 1 < rank; ++d) rows *= out_[d];
    const std::byte* in = ctx.inputs[0];
    std::byte* out = ctx.outputs[0];
    for (int64_t r = 0; r < rows; ++r) {
      int64_t rest = r;
      int64_t offset = starts_[rank - 1] * in_strides_[rank - 1];
      for (size_t d = rank - 1; d-- > 0;) {
        offset += (starts_[d] + (rest % out_[d]) * steps_[d]) * in_strides_[d];
        rest /= out_[d];
      }
      std::byte* dst = out + static_cast<size_t>(r * inner) * element_;
      if (inner_step == 1) {
        std::memcpy(dst, in + static_cast<size_t>(offset) * element_,
                    static_cast<size_t>(inner) * element_);
      } else {
        for (int64_t i = 0; i < inner; ++i) {
          std::memcpy(dst + static_cast<size_t>(i) * element_,
                      in + static_cast<size_t>(offset + i * inner_step) * element_, element_);
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  const size_t element_;
  const Shape out_, in_strides_, starts_, steps_;
};

absl::StatusOr<std::unique_ptr<OpKernel>> CreateSlice(KernelContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  const auto rank = static_cast<int64_t>(x.shape.size());
  BRIGADE_ASSIGN_OR_RETURN(std::vector<int64_t> starts, ConstantInts(ctx, 1));
  BRIGADE_ASSIGN_OR_RETURN(std::vector<int64_t> ends, ConstantInts(ctx, 2));
  std::vector<int64_t> axes, steps;
  if (ctx.has_input(3)) {
    BRIGADE_ASSIGN_OR_RETURN(axes, ConstantInts(ctx, 3));
  } else {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (ctx.has_input(4)) {
    BRIGADE_ASSIGN_OR_RETURN(steps, ConstantInts(ctx, 4));
  } else {
    steps.assign(starts.size(), 1);
  }
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size()) {
    return ctx.Error("starts, ends, axes and steps must have equal lengths");
  }
  if (rank == 0 && !starts.empty()) return ctx.Error("cannot slice a scalar");
  Shape out = x.shape;
  Shape begin(x.shape.size(), 0), step(x.shape.size(), 1);
  std::vector<bool> seen(x.shape.size(), false);
  for (size_t i = 0; i < starts.size(); ++i) {
    BRIGADE_ASSIGN_OR_RETURN(int64_t a, NormalizeAxis(ctx, axes[i], rank));
    const auto d = static_cast<size_t>(a);
    if (seen[d]) return ctx.Error("axis ", axes[i], " repeated");
    seen[d] = true;
    if (steps[i] == 0) return ctx.Error("step is zero");
    const int64_t dim = x.shape[d];
    int64_t s = starts[i], e = ends[i];
    if (s < 0) s += dim;  // still negative when far out of range; clamped below
    if (e < 0) e += dim;
    if (steps[i] > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
    } else {
      s = std::clamp<int64_t>(s, -1, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
    }
    // Written so that no step (the model's value, up to ±2^63) can overflow: the range is at
    // most the dimension.
    const int64_t range = steps[i] > 0 ? e - s : s - e;
    const int64_t magnitude = steps[i] > 0 ? steps[i]
                              : steps[i] == std::numeric_limits<int64_t>::min()
                                  ? std::numeric_limits<int64_t>::max()
                                  : -steps[i];
    const int64_t count = range > 0 ? (range - 1) / magnitude + 1 : 0;
    out[d] = count;
    begin[d] = count > 0 ? s : 0;
    step[d] = steps[i];
  }
  ctx.SetOutput(0, x.dtype, out);
  if (DataTypeSize(x.dtype) == 0) return ctx.Unsupported("element type");
  Shape strides = Strides(x.shape);
  if (out.empty()) {
    out.push_back(1);
    strides.push_back(1);
    begin.push_back(0);
    step.push_back(1);
  }
  for (int64_t d : out) {
    if (d == 0) {
      return std::make_unique<SliceKernel>(DataTypeSize(x.dtype), Shape{0}, Shape{1}, Shape{0},
                                           Shape{1});
    }
  }
  return std::make_unique<SliceKernel>(DataTypeSize(x.dtype), std::move(out), std::move(strides),
                                       std::move(begin), std::move(step));
}

// ---------------------------------------------------------------------------------------------
// Gather

template <typename Index>
absl::Status GatherRows(const RunContext& ctx, int64_t outer, int64_t dim, int64_t count,
                        size_t block) {
  const Index* indices = ctx.in<Index>(1);
  for (int64_t j = 0; j < count; ++j) {
    const auto idx = static_cast<int64_t>(indices[j]);
    if (idx < -dim || idx >= dim) {
      return absl::InvalidArgumentError(
          StrCat("Gather: index ", idx, " is out of range for a dimension of ", dim));
    }
  }
  ParallelFor(ctx.threads, outer * count,
              std::max<int64_t>(1, 4096 / static_cast<int64_t>(block + 1)),
              [&](int64_t b, int64_t e) {
                for (int64_t k = b; k < e; ++k) {
                  const int64_t o = k / count, j = k % count;
                  int64_t idx = static_cast<int64_t>(indices[j]);
                  if (idx < 0) idx += dim;
                  std::memcpy(ctx.outputs[0] + static_cast<size_t>(k) * block,
                              ctx.inputs[0] + static_cast<size_t>(o * dim + idx) * block, block);
                }
              });
  return absl::OkStatus();
}

class GatherKernel final : public OpKernel {
 public:
  GatherKernel(DataType index_type, int64_t outer, int64_t dim, int64_t count, size_t block)
      : index_type_(index_type), outer_(outer), dim_(dim), count_(count), block_(block) {}
  absl::Status Run(const RunContext& ctx) override {
    if (index_type_ == DataType::kInt64) {
      return GatherRows<int64_t>(ctx, outer_, dim_, count_, block_);
    }
    return GatherRows<int32_t>(ctx, outer_, dim_, count_, block_);
  }

 private:
  const DataType index_type_;
  const int64_t outer_, dim_, count_;
  const size_t block_;
};

bool IsIndexType(DataType t) { return t == DataType::kInt64 || t == DataType::kInt32; }

absl::StatusOr<std::unique_ptr<OpKernel>> CreateGather(KernelContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  const ValueInfo& idx = ctx.input(1);
  if (!IsIndexType(idx.dtype)) return ctx.Error("indices must be int32 or int64");
  const auto rank = static_cast<int64_t>(x.shape.size());
  if (rank == 0) return ctx.Error("data must have rank >= 1");
  BRIGADE_ASSIGN_OR_RETURN(int64_t axis,
                           NormalizeAxis(ctx, ctx.node->attributes.GetInt("axis", 0), rank));
  const auto a = static_cast<size_t>(axis);
  Shape out(x.shape.begin(), x.shape.begin() + axis);
  out.insert(out.end(), idx.shape.begin(), idx.shape.end());
  out.insert(out.end(), x.shape.begin() + axis + 1, x.shape.end());
  ctx.SetOutput(0, x.dtype, out);
  if (DataTypeSize(x.dtype) == 0) return ctx.Unsupported("element type");
  const size_t block =
      static_cast<size_t>(DimProduct(x.shape, a + 1, x.shape.size())) * DataTypeSize(x.dtype);
  return std::make_unique<GatherKernel>(idx.dtype, DimProduct(x.shape, 0, a), x.shape[a],
                                        idx.num_elements(), block);
}

// ---------------------------------------------------------------------------------------------
// GatherElements

class GatherElementsKernel final : public OpKernel {
 public:
  GatherElementsKernel(DataType index_type, size_t element, Shape data, Shape index, size_t axis)
      : index_type_(index_type),
        element_(element),
        data_(std::move(data)),
        index_(std::move(index)),
        axis_(axis) {}

  absl::Status Run(const RunContext& ctx) override {
    const Shape data_strides = Strides(data_);
    const int64_t n = DimProduct(index_, 0, index_.size());
    const int64_t dim = data_[axis_];
    Shape pos(index_.size(), 0);
    for (int64_t k = 0; k < n; ++k) {
      int64_t idx = index_type_ == DataType::kInt64 ? ctx.in<int64_t>(1)[k] : ctx.in<int32_t>(1)[k];
      if (idx < -dim || idx >= dim) {
        return absl::InvalidArgumentError(
            StrCat("GatherElements: index ", idx, " is out of range for a dimension of ", dim));
      }
      if (idx < 0) idx += dim;
      int64_t offset = 0;
      for (size_t d = 0; d < index_.size(); ++d) {
        offset += (d == axis_ ? idx : pos[d]) * data_strides[d];
      }
      std::memcpy(ctx.outputs[0] + static_cast<size_t>(k) * element_,
                  ctx.inputs[0] + static_cast<size_t>(offset) * element_, element_);
      for (size_t d = index_.size(); d-- > 0;) {
        if (++pos[d] < index_[d]) break;
        pos[d] = 0;
      }
    }
    return absl::OkStatus();
  }

 private:
  const DataType index_type_;
  const size_t element_;
  const Shape data_, index_;
  const size_t axis_;
};

absl::StatusOr<std::unique_ptr<OpKernel>> CreateGatherElements(KernelContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  const ValueInfo& idx = ctx.input(1);
  if (!IsIndexType(idx.dtype)) return ctx.Error("indices must be int32 or int64");
  if (idx.shape.size() != x.shape.size() || x.shape.empty()) {
    return ctx.Error("data and indices must have the same rank >= 1");
  }
  const auto rank = static_cast<int64_t>(x.shape.size());
  BRIGADE_ASSIGN_OR_RETURN(int64_t axis,
                           NormalizeAxis(ctx, ctx.node->attributes.GetInt("axis", 0), rank));
  for (size_t d = 0; d < x.shape.size(); ++d) {
    if (d != static_cast<size_t>(axis) && idx.shape[d] > x.shape[d]) {
      return ctx.Error("indices dim ", d, " exceeds the data's");
    }
  }
  ctx.SetOutput(0, x.dtype, idx.shape);
  if (DataTypeSize(x.dtype) == 0) return ctx.Unsupported("element type");
  return std::make_unique<GatherElementsKernel>(idx.dtype, DataTypeSize(x.dtype), x.shape,
                                                idx.shape, static_cast<size_t>(axis));
}

// ---------------------------------------------------------------------------------------------
// GatherND: out[b, j] = data[b, indices[b, j]], where b runs over the first batch_dims dims of
// both, and each index tuple of length k picks a slice data[b, i0, ..., ik-1, :, ...] of `slice_`
// elements. The inverse of ScatterND (scatter.cc), with the same run-time check of every index.

class GatherNDKernel final : public OpKernel {
 public:
  GatherNDKernel(std::string node, DataType index_type, size_t element, Shape dims, Shape strides,
                 int64_t batches, int64_t tuples, int64_t batch_stride, int64_t slice)
      : node_(std::move(node)),
        index_type_(index_type),
        element_(element),
        dims_(std::move(dims)),
        strides_(std::move(strides)),
        batches_(batches),
        tuples_(tuples),
        batch_stride_(batch_stride),
        slice_(slice) {}

  absl::Status Run(const RunContext& ctx) override {
    const auto k = static_cast<int64_t>(dims_.size());
    auto index = [&](int64_t i) -> int64_t {
      return index_type_ == DataType::kInt64 ? ctx.in<int64_t>(1)[i] : ctx.in<int32_t>(1)[i];
    };
    for (int64_t j = 0; j < batches_ * tuples_; ++j) {
      for (int64_t c = 0; c < k; ++c) {
        const int64_t idx = index(j * k + c);
        const int64_t dim = dims_[static_cast<size_t>(c)];
        if (idx < -dim || idx >= dim) {
          return absl::InvalidArgumentError(StrCat(node_, ": indices[", j, "][", c, "] = ", idx,
                                                   " is out of range for a dimension of size ",
                                                   dim));
        }
      }
    }
    const size_t slice_bytes = static_cast<size_t>(slice_) * element_;
    for (int64_t j = 0; j < batches_ * tuples_; ++j) {
      int64_t offset = (j / tuples_) * batch_stride_;
      for (int64_t c = 0; c < k; ++c) {
        int64_t idx = index(j * k + c);
        if (idx < 0) idx += dims_[static_cast<size_t>(c)];
        offset += idx * strides_[static_cast<size_t>(c)];
      }
      std::memcpy(ctx.outputs[0] + static_cast<size_t>(j) * slice_bytes,
                  ctx.inputs[0] + static_cast<size_t>(offset) * element_, slice_bytes);
    }
    return absl::OkStatus();
  }

 private:
  const std::string node_;  // "node 'name' (GatherND)"
  const DataType index_type_;
  const size_t element_;
  const Shape dims_, strides_;  // the k indexed data dims and their strides in elements
  const int64_t batches_, tuples_, batch_stride_, slice_;
};

absl::StatusOr<std::unique_ptr<OpKernel>> CreateGatherND(KernelContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  const ValueInfo& idx = ctx.input(1);
  if (!IsIndexType(idx.dtype)) return ctx.Error("indices must be int64 or int32");
  if (x.shape.empty() || idx.shape.empty()) return ctx.Error("data and indices need rank >= 1");
  const int64_t b = ctx.node->attributes.GetInt("batch_dims", 0);
  const auto r = static_cast<int64_t>(x.shape.size());
  const auto q = static_cast<int64_t>(idx.shape.size());
  if (b < 0 || b >= std::min(r, q)) {
    return ctx.Error("attribute 'batch_dims' is ", b, ", not in [0, min(data rank ", r,
                     ", indices rank ", q, "))");
  }
  const auto bb = static_cast<size_t>(b);
  for (size_t d = 0; d < bb; ++d) {
    if (x.shape[d] != idx.shape[d]) {
      return ctx.Error("batch dimension ", d, " is ", x.shape[d], " in data and ", idx.shape[d],
                       " in indices");
    }
  }
  const int64_t k = idx.shape.back();
  if (k < 1 || k > r - b) {
    return ctx.Error("indices' last dimension is ", k, ", not in [1, ", r - b, "]");
  }
  const auto kk = static_cast<size_t>(k);
  Shape out(idx.shape.begin(), idx.shape.end() - 1);
  out.insert(out.end(), x.shape.begin() + b + k, x.shape.end());
  ctx.SetOutput(0, x.dtype, out);
  if (DataTypeSize(x.dtype) == 0) return ctx.Unsupported("element type");
  const Shape strides = Strides(x.shape);
  return std::make_unique<GatherNDKernel>(
      StrCat("node '", ctx.node->name, "' (", ctx.node->op_type, ")"), idx.dtype,
      DataTypeSize(x.dtype), Shape(x.shape.begin() + b, x.shape.begin() + b + k),
      Shape(strides.begin() + b, strides.begin() + b + k), DimProduct(idx.shape, 0, bb),
      DimProduct(idx.shape, bb, idx.shape.size() - 1), DimProduct(x.shape, bb, x.shape.size()),
      DimProduct(x.shape, bb + kk, x.shape.size()));
}

// ---------------------------------------------------------------------------------------------
// TopK

class TopKKernel final : public OpKernel {
 public:
  TopKKernel(DataType dtype, int64_t outer, int64_t dim, int64_t inner, int64_t k, bool largest,
             bool sorted)
      : dtype_(dtype),
        outer_(outer),
        dim_(dim),
        inner_(inner),
        k_(k),
        largest_(largest),
        sorted_(sorted) {}

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
    T* values = ctx.out<T>(0);
    int64_t* indices = ctx.outputs.size() > 1 ? ctx.out<int64_t>(1) : nullptr;
    std::vector<int64_t> order(static_cast<size_t>(dim_));
    for (int64_t o = 0; o < outer_; ++o) {
      for (int64_t i = 0; i < inner_; ++i) {
        const T* base = in + o * dim_ * inner_ + i;
        std::iota(order.begin(), order.end(), 0);
        auto better = [&](int64_t a, int64_t b) {
          const T va = base[a * inner_], vb = base[b * inner_];
          if (va == vb) return a < b;
          return largest_ ? va > vb : va < vb;
        };
        std::partial_sort(order.begin(), order.begin() + k_, order.end(), better);
        if (!sorted_) std::sort(order.begin(), order.begin() + k_);
        for (int64_t j = 0; j < k_; ++j) {
          const int64_t out_index = (o * k_ + j) * inner_ + i;
          values[out_index] = base[order[static_cast<size_t>(j)] * inner_];
          if (indices != nullptr) indices[out_index] = order[static_cast<size_t>(j)];
        }
      }
    }
  }

  const DataType dtype_;
  const int64_t outer_, dim_, inner_, k_;
  const bool largest_, sorted_;
};

absl::StatusOr<std::unique_ptr<OpKernel>> CreateTopK(KernelContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  const auto rank = static_cast<int64_t>(x.shape.size());
  BRIGADE_ASSIGN_OR_RETURN(int64_t axis,
                           NormalizeAxis(ctx, ctx.node->attributes.GetInt("axis", -1), rank));
  int64_t k = ctx.node->attributes.GetInt("k", -1);  // opset < 10
  if (ctx.has_input(1)) {
    BRIGADE_ASSIGN_OR_RETURN(std::vector<int64_t> kv, ConstantInts(ctx, 1));
    if (kv.size() != 1) return ctx.Error("K must hold one value");
    k = kv[0];
  }
  const auto a = static_cast<size_t>(axis);
  if (k < 0 || k > x.shape[a]) {
    return ctx.Error("K=", k, " is out of range for axis size ", x.shape[a]);
  }
  Shape out = x.shape;
  out[a] = k;
  if (x.dtype == DataType::kBool || !VisitNumeric(x.dtype, []<typename T>() {})) {
    return ctx.Unsupported("element type ", DataTypeName(x.dtype));
  }
  ctx.SetOutput(0, x.dtype, out);
  if (ctx.outputs.size() > 1) ctx.SetOutput(1, DataType::kInt64, out);
  return std::make_unique<TopKKernel>(x.dtype, DimProduct(x.shape, 0, a), x.shape[a],
                                      DimProduct(x.shape, a + 1, x.shape.size()), k,
                                      ctx.node->attributes.GetInt("largest", 1) != 0,
                                      ctx.node->attributes.GetInt("sorted", 1) != 0);
}

}  // namespace

void RegisterSliceGatherKernels(KernelRegistry* registry) {
  auto add = [&](std::string op, KernelFactory create, uint32_t values) {
    KernelDef def;
    def.op_type = std::move(op);
    def.create = create;
    def.value_inputs = values;
    registry->Add(std::move(def));
  };
  add("Slice", &CreateSlice, Inputs({1, 2, 3, 4}));
  add("Gather", &CreateGather, 0);
  add("GatherElements", &CreateGatherElements, 0);
  add("TopK", &CreateTopK, Inputs({1}));
  add("GatherND", &CreateGatherND, 0);
}

}  // namespace brigade::engine::onnx
