// Scatter ops: ScatterND (opsets 11–18, reduction none/add/mul/max/min), ScatterElements and its
// predecessor Scatter (opsets 9–10).
//
// The output has the data's shape, so everything but the indices is planned in the factory; the
// indices arrive at run time, and Run() checks every one of them (negative ones count from the
// end) before it writes anything, failing the request with INVALID_ARGUMENT on one out of range.
// Updates are applied in index order, so duplicate indices with a reduction accumulate every
// update and, without one, the last update wins (ONNX leaves that order undefined).
// The output takes the data's buffer in place when the planner offers it (the data is an
// intermediate nobody else reads), which saves the copy of the whole tensor.
// Thread safety: one kernel runs on one thread at a time; the copy of the data may use
// `threads` threads. Run() allocates nothing.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>

#include "core/status_macros.h"
#include "engine/onnx/kernels/kernel_util.h"
#include "engine/onnx/kernels/registry.h"

namespace brigade::engine::onnx {
namespace {

enum class ScatterReduction { kNone, kAdd, kMul, kMax, kMin };

absl::StatusOr<ScatterReduction> ParseScatterReduction(const KernelContext& ctx) {
  const std::string name = ctx.node->attributes.GetString("reduction", "none");
  if (name == "none") return ScatterReduction::kNone;
  if (name == "add") return ScatterReduction::kAdd;
  if (name == "mul") return ScatterReduction::kMul;
  if (name == "max") return ScatterReduction::kMax;
  if (name == "min") return ScatterReduction::kMin;
  return ctx.Error("attribute 'reduction' is '", name, "', not one of none, add, mul, max, min");
}

// The element types a scatter can write: any fixed-size type by copy, the numeric ones (not
// bool) with a reduction.
absl::Status CheckScatterType(const KernelContext& ctx, DataType dtype,
                              ScatterReduction reduction) {
  if (DataTypeSize(dtype) == 0) return ctx.Unsupported("element type ", DataTypeName(dtype));
  if (reduction != ScatterReduction::kNone &&
      (dtype == DataType::kBool || !VisitNumeric(dtype, []<typename T>() {}))) {
    return ctx.Unsupported("reduction over element type ", DataTypeName(dtype));
  }
  return absl::OkStatus();
}

// a + b and a * b, wrapping for integers (signed overflow would be undefined; the values are the
// request's).
template <typename T>
T ScatterAdd(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  } else {
    return a + b;
  }
}
template <typename T>
T ScatterMul(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  } else {
    return a * b;
  }
}

template <typename T>
void Combine(ScatterReduction reduction, T* dst, const T* src, int64_t n) {
  switch (reduction) {
    case ScatterReduction::kNone:
      std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(T));
      return;
    case ScatterReduction::kAdd:
      for (int64_t i = 0; i < n; ++i) dst[i] = ScatterAdd(dst[i], src[i]);
      return;
    case ScatterReduction::kMul:
      for (int64_t i = 0; i < n; ++i) dst[i] = ScatterMul(dst[i], src[i]);
      return;
    case ScatterReduction::kMax:
      for (int64_t i = 0; i < n; ++i) dst[i] = std::max(dst[i], src[i]);
      return;
    case ScatterReduction::kMin:
      for (int64_t i = 0; i < n; ++i) dst[i] = std::min(dst[i], src[i]);
      return;
  }
}

int64_t IndexAt(DataType index_type, const std::byte* indices, int64_t i) {
  return index_type == DataType::kInt64 ? reinterpret_cast<const int64_t*>(indices)[i]
                                        : reinterpret_cast<const int32_t*>(indices)[i];
}

// "node 'name' (Op)", the prefix of run-time errors (KernelContext::Error's at plan time).
std::string ScatterNodeLabel(const KernelContext& ctx) {
  return StrCat("node '", ctx.node->name, "' (", ctx.node->op_type, ")");
}

bool IsScatterIndexType(DataType t) { return t == DataType::kInt64 || t == DataType::kInt32; }

// ---------------------------------------------------------------------------------------------
// ScatterND: output = data; output[indices[j]] ⊕= updates[j], where each index tuple of length k
// addresses a slice data[i0, ..., ik-1, :, ...] of `slice_` elements.

class ScatterNDKernel final : public OpKernel {
 public:
  ScatterNDKernel(std::string node, DataType dtype, DataType index_type, ScatterReduction reduction,
                  Shape dims, Shape strides, int64_t tuples, int64_t slice, size_t data_bytes)
      : node_(std::move(node)),
        dtype_(dtype),
        index_type_(index_type),
        reduction_(reduction),
        dims_(std::move(dims)),
        strides_(std::move(strides)),
        tuples_(tuples),
        slice_(slice),
        data_bytes_(data_bytes) {}

  absl::Status Run(const RunContext& ctx) override {
    const std::byte* indices = ctx.inputs[1];
    const auto k = static_cast<int64_t>(dims_.size());
    for (int64_t j = 0; j < tuples_; ++j) {
      for (int64_t c = 0; c < k; ++c) {
        const int64_t idx = IndexAt(index_type_, indices, j * k + c);
        const int64_t dim = dims_[static_cast<size_t>(c)];
        if (idx < -dim || idx >= dim) {
          return absl::InvalidArgumentError(StrCat(node_, ": indices[", j, "][", c, "] = ", idx,
                                                   " is out of range for data dimension ", c,
                                                   " of size ", dim));
        }
      }
    }
    ParallelCopy(ctx.threads, ctx.outputs[0], ctx.inputs[0], data_bytes_);
    const size_t element = DataTypeSize(dtype_);
    for (int64_t j = 0; j < tuples_; ++j) {
      int64_t offset = 0;
      for (int64_t c = 0; c < k; ++c) {
        int64_t idx = IndexAt(index_type_, indices, j * k + c);
        if (idx < 0) idx += dims_[static_cast<size_t>(c)];
        offset += idx * strides_[static_cast<size_t>(c)];
      }
      std::byte* dst = ctx.outputs[0] + static_cast<size_t>(offset) * element;
      const std::byte* src = ctx.inputs[2] + static_cast<size_t>(j * slice_) * element;
      if (reduction_ == ScatterReduction::kNone) {
        std::memcpy(dst, src, static_cast<size_t>(slice_) * element);
        continue;
      }
      VisitNumeric(dtype_, [&]<typename T>() {
        if constexpr (!std::is_same_v<T, bool>) {
          Combine<T>(reduction_, reinterpret_cast<T*>(dst), reinterpret_cast<const T*>(src),
                     slice_);
        }
      });
    }
    return absl::OkStatus();
  }

 private:
  const std::string node_;  // "node 'name' (Op)"
  const DataType dtype_, index_type_;
  const ScatterReduction reduction_;
  const Shape dims_;     // data dims addressed by an index tuple (k of them)
  const Shape strides_;  // their strides in elements
  const int64_t tuples_, slice_;
  const size_t data_bytes_;
};

absl::StatusOr<std::unique_ptr<OpKernel>> CreateScatterND(KernelContext& ctx) {
  if (!ctx.has_input(0) || !ctx.has_input(1) || !ctx.has_input(2)) {
    return ctx.Error("needs data, indices and updates");
  }
  const ValueInfo& data = ctx.input(0);
  const ValueInfo& indices = ctx.input(1);
  const ValueInfo& updates = ctx.input(2);
  if (!IsScatterIndexType(indices.dtype)) return ctx.Error("indices must be int64 or int32");
  if (updates.dtype != data.dtype) return ctx.Error("updates and data differ in element type");
  if (data.shape.empty()) return ctx.Error("data must have rank >= 1");
  if (indices.shape.empty()) return ctx.Error("indices must have rank >= 1");
  const int64_t k = indices.shape.back();
  if (k < 1 || k > static_cast<int64_t>(data.shape.size())) {
    return ctx.Error("indices' last dimension is ", k, ", not in [1, data rank ", data.shape.size(),
                     "]");
  }
  // updates = indices.shape[:-1] + data.shape[k:]
  Shape expected(indices.shape.begin(), indices.shape.end() - 1);
  expected.insert(expected.end(), data.shape.begin() + k, data.shape.end());
  if (updates.shape != expected) {
    return ctx.Error("updates have shape ", ShapeToString(updates.shape), ", expected ",
                     ShapeToString(expected), " from data ", ShapeToString(data.shape),
                     " and indices ", ShapeToString(indices.shape));
  }
  BRIGADE_ASSIGN_OR_RETURN(ScatterReduction reduction, ParseScatterReduction(ctx));
  ctx.SetOutput(0, data.dtype, data.shape);
  BRIGADE_RETURN_IF_ERROR(CheckScatterType(ctx, data.dtype, reduction));
  if (ctx.input_reusable(0)) ctx.output_reuses_input = 0;
  const Shape strides = Strides(data.shape);
  const auto kk = static_cast<size_t>(k);
  return std::make_unique<ScatterNDKernel>(
      ScatterNodeLabel(ctx), data.dtype, indices.dtype, reduction,
      Shape(data.shape.begin(), data.shape.begin() + k),
      Shape(strides.begin(), strides.begin() + k),
      DimProduct(indices.shape, 0, indices.shape.size() - 1),
      DimProduct(data.shape, kk, data.shape.size()), data.byte_size());
}

// ---------------------------------------------------------------------------------------------
// ScatterElements: output = data; output[p with p[axis] = indices[p]] ⊕= updates[p] for every
// position p of indices (and of updates, which has the same shape).

class ScatterElementsKernel final : public OpKernel {
 public:
  ScatterElementsKernel(std::string node, DataType dtype, DataType index_type,
                        ScatterReduction reduction, Shape index_shape, Shape index_strides,
                        Shape data_strides, size_t axis, int64_t axis_dim, size_t data_bytes)
      : node_(std::move(node)),
        dtype_(dtype),
        index_type_(index_type),
        reduction_(reduction),
        index_shape_(std::move(index_shape)),
        index_strides_(std::move(index_strides)),
        data_strides_(std::move(data_strides)),
        axis_(axis),
        axis_dim_(axis_dim),
        count_(DimProduct(index_shape_, 0, index_shape_.size())),
        data_bytes_(data_bytes) {}

  absl::Status Run(const RunContext& ctx) override {
    const std::byte* indices = ctx.inputs[1];
    for (int64_t p = 0; p < count_; ++p) {
      const int64_t idx = IndexAt(index_type_, indices, p);
      if (idx < -axis_dim_ || idx >= axis_dim_) {
        return absl::InvalidArgumentError(StrCat(node_, ": index ", idx, " at position ", p,
                                                 " is out of range for an axis of size ",
                                                 axis_dim_));
      }
    }
    ParallelCopy(ctx.threads, ctx.outputs[0], ctx.inputs[0], data_bytes_);
    const size_t element = DataTypeSize(dtype_);
    for (int64_t p = 0; p < count_; ++p) {
      int64_t idx = IndexAt(index_type_, indices, p);
      if (idx < 0) idx += axis_dim_;
      int64_t offset = 0;
      for (size_t d = 0; d < index_shape_.size(); ++d) {
        const int64_t coord = d == axis_ ? idx : p / index_strides_[d] % index_shape_[d];
        offset += coord * data_strides_[d];
      }
      std::byte* dst = ctx.outputs[0] + static_cast<size_t>(offset) * element;
      const std::byte* src = ctx.inputs[2] + static_cast<size_t>(p) * element;
      if (reduction_ == ScatterReduction::kNone) {
        std::memcpy(dst, src, element);
        continue;
      }
      VisitNumeric(dtype_, [&]<typename T>() {
        if constexpr (!std::is_same_v<T, bool>) {
          Combine<T>(reduction_, reinterpret_cast<T*>(dst), reinterpret_cast<const T*>(src), 1);
        }
      });
    }
    return absl::OkStatus();
  }

 private:
  const std::string node_;  // "node 'name' (Op)"
  const DataType dtype_, index_type_;
  const ScatterReduction reduction_;
  const Shape index_shape_, index_strides_, data_strides_;
  const size_t axis_;
  const int64_t axis_dim_, count_;
  const size_t data_bytes_;
};

absl::StatusOr<std::unique_ptr<OpKernel>> CreateScatterElements(KernelContext& ctx) {
  if (!ctx.has_input(0) || !ctx.has_input(1) || !ctx.has_input(2)) {
    return ctx.Error("needs data, indices and updates");
  }
  const ValueInfo& data = ctx.input(0);
  const ValueInfo& indices = ctx.input(1);
  const ValueInfo& updates = ctx.input(2);
  if (!IsScatterIndexType(indices.dtype)) return ctx.Error("indices must be int64 or int32");
  if (updates.dtype != data.dtype) return ctx.Error("updates and data differ in element type");
  if (data.shape.empty()) return ctx.Error("data must have rank >= 1");
  if (indices.shape.size() != data.shape.size()) {
    return ctx.Error("indices have rank ", indices.shape.size(), ", data rank ", data.shape.size());
  }
  if (updates.shape != indices.shape) {
    return ctx.Error("updates have shape ", ShapeToString(updates.shape), ", indices ",
                     ShapeToString(indices.shape));
  }
  const auto rank = static_cast<int64_t>(data.shape.size());
  BRIGADE_ASSIGN_OR_RETURN(int64_t axis,
                           NormalizeAxis(ctx, ctx.node->attributes.GetInt("axis", 0), rank));
  for (size_t d = 0; d < data.shape.size(); ++d) {
    // Positions off the axis address the data directly: they must lie inside it.
    if (d != static_cast<size_t>(axis) && indices.shape[d] > data.shape[d]) {
      return ctx.Error("indices dimension ", d, " (", indices.shape[d], ") exceeds the data's (",
                       data.shape[d], ")");
    }
  }
  BRIGADE_ASSIGN_OR_RETURN(ScatterReduction reduction, ParseScatterReduction(ctx));
  ctx.SetOutput(0, data.dtype, data.shape);
  BRIGADE_RETURN_IF_ERROR(CheckScatterType(ctx, data.dtype, reduction));
  if (ctx.input_reusable(0)) ctx.output_reuses_input = 0;
  const auto a = static_cast<size_t>(axis);
  return std::make_unique<ScatterElementsKernel>(
      ScatterNodeLabel(ctx), data.dtype, indices.dtype, reduction, indices.shape,
      Strides(indices.shape), Strides(data.shape), a, data.shape[a], data.byte_size());
}

}  // namespace

void RegisterScatterKernels(KernelRegistry* registry) {
  KernelDef nd;
  nd.op_type = "ScatterND";
  nd.since_version = 11;
  nd.create = &CreateScatterND;
  registry->Add(nd);
  KernelDef elements;
  elements.op_type = "ScatterElements";
  elements.since_version = 11;
  elements.create = &CreateScatterElements;
  registry->Add(elements);
  // Scatter (opsets 9–10, deprecated at 11) is ScatterElements without negative indices.
  KernelDef scatter;
  scatter.op_type = "Scatter";
  scatter.since_version = 9;
  scatter.until_version = 10;
  scatter.create = &CreateScatterElements;
  registry->Add(scatter);
}

}  // namespace brigade::engine::onnx
