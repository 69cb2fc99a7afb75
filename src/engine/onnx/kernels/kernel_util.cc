#include "engine/onnx/kernels/kernel_util.h"

#include <limits>

#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "core/tensor.h"
#include "engine/onnx/kernels/kernel.h"

namespace brigade::engine::onnx {

int64_t ValueInfo::num_elements() const {
  int64_t n = 1;
  bool saturated = false;
  for (int64_t d : shape) {
    if (d == 0) return 0;
    saturated = saturated || __builtin_mul_overflow(n, d, &n);
  }
  return saturated ? std::numeric_limits<int64_t>::max() : n;
}

size_t ValueInfo::byte_size() const {
  if (layout.blocked) return layout.desc.get_size();
  const auto elements = static_cast<size_t>(num_elements());
  const size_t element_size = DataTypeSize(dtype);
  if (element_size != 0 && elements > std::numeric_limits<size_t>::max() / element_size) {
    return std::numeric_limits<size_t>::max();
  }
  return elements * element_size;
}

absl::Status CheckOutputSizes(const KernelContext& ctx) {
  for (size_t k = 0; k < ctx.outputs.size(); ++k) {
    const ValueInfo& out = ctx.outputs[k];
    if (out.dtype == DataType::kInvalid) continue;
    for (int64_t d : out.shape) {
      if (d < 0) return ctx.Error("output ", k, " has a negative dimension ", d);
    }
    if (out.byte_size() > kMaxTensorBytes) {
      return ctx.Error("output ", k, " would take more than ", kMaxTensorBytes, " bytes (shape ",
                       absl::StrJoin(out.shape, "x"), ")");
    }
  }
  return absl::OkStatus();
}

absl::Status CheckShapeSize(const KernelContext& ctx, const Shape& shape) {
  auto count = ElementCount(shape);
  if (!count.ok()) return ctx.Error(count.status().message());
  if (static_cast<uint64_t>(*count) > kMaxTensorBytes) {
    return ctx.Error("shape ", ShapeToString(shape), " has more than ", kMaxTensorBytes,
                     " elements");
  }
  return absl::OkStatus();
}

bool AllOutputsEmpty(const KernelContext& ctx) {
  bool any = false;
  for (const ValueInfo& out : ctx.outputs) {
    if (out.dtype == DataType::kInvalid) continue;
    if (out.num_elements() != 0) return false;
    any = true;
  }
  return any;
}

absl::StatusOr<int64_t> NormalizeAxis(const KernelContext& ctx, int64_t axis, int64_t rank) {
  const int64_t normalized = axis < 0 ? axis + rank : axis;
  if (normalized < 0 || normalized >= rank) {
    return ctx.Error("axis ", axis, " is out of range for rank ", rank);
  }
  return normalized;
}

absl::StatusOr<int64_t> NormalizeAxisOrScalar(const KernelContext& ctx, int64_t axis,
                                              int64_t rank) {
  if (rank == 0 && axis == 0) return 0;
  return NormalizeAxis(ctx, axis, rank);
}

absl::StatusOr<std::vector<int64_t>> ConstantInts(const KernelContext& ctx, size_t input) {
  if (!ctx.has_input(input) || ctx.input(input).constant == nullptr) {
    return ctx.Error("input ", input, " must be known before run time");
  }
  const Tensor& t = *ctx.input(input).constant;
  std::vector<int64_t> out;
  if (t.dtype() == DataType::kInt64) {
    auto v = t.values<int64_t>();
    out.assign(v.begin(), v.end());
  } else if (t.dtype() == DataType::kInt32) {
    auto v = t.values<int32_t>();
    out.assign(v.begin(), v.end());
  } else {
    return ctx.Error("input ", input, " must be int32 or int64, got ", DataTypeName(t.dtype()));
  }
  return out;
}

absl::StatusOr<std::vector<float>> ConstantFloats(const KernelContext& ctx, size_t input) {
  if (!ctx.has_input(input) || ctx.input(input).constant == nullptr) {
    return ctx.Error("input ", input, " must be known before run time");
  }
  const Tensor& t = *ctx.input(input).constant;
  std::vector<float> out;
  if (t.dtype() == DataType::kFp32) {
    auto v = t.values<float>();
    out.assign(v.begin(), v.end());
  } else if (t.dtype() == DataType::kFp64) {
    for (double d : t.values<double>()) out.push_back(static_cast<float>(d));
  } else {
    return ctx.Error("input ", input, " must be float, got ", DataTypeName(t.dtype()));
  }
  return out;
}

absl::StatusOr<double> ConstantScalar(const KernelContext& ctx, size_t input) {
  if (!ctx.has_input(input) || ctx.input(input).constant == nullptr) {
    return ctx.Error("input ", input, " must be known before run time");
  }
  const Tensor& t = *ctx.input(input).constant;
  if (t.num_elements() != 1) {
    return ctx.Error("input ", input, " must hold one element, has ", t.num_elements());
  }
  double value = 0;
  if (!VisitNumeric(t.dtype(),
                    [&]<typename T>() { value = static_cast<double>(t.values<T>()[0]); })) {
    return ctx.Error("input ", input, " has unsupported type ", DataTypeName(t.dtype()));
  }
  return value;
}

absl::StatusOr<Shape> BroadcastShapes(const KernelContext& ctx, const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da == db || db == 1) {
      out[i] = da;
    } else if (da == 1) {
      out[i] = db;
    } else {
      return ctx.Error("shapes ", ShapeToString(a), " and ", ShapeToString(b),
                       " cannot be broadcast together");
    }
  }
  BRIGADE_RETURN_IF_ERROR(CheckShapeSize(ctx, out));
  return out;
}

Shape Strides(const Shape& shape) {
  Shape strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

Shape BroadcastStrides(const Shape& shape, size_t rank) {
  Shape out(rank, 0);
  const Shape strides = Strides(shape);
  const size_t offset = rank - shape.size();
  for (size_t i = 0; i < shape.size(); ++i) {
    out[offset + i] = shape[i] == 1 ? 0 : strides[i];
  }
  return out;
}

int64_t DimProduct(const Shape& shape, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end && i < shape.size(); ++i) n *= shape[i];
  return n;
}

void ParallelCopy(int threads, std::byte* dst, const std::byte* src, size_t bytes) {
  if (dst == src || bytes == 0) return;
  constexpr int64_t kGrain = 1 << 20;
  ParallelFor(threads, static_cast<int64_t>(bytes), kGrain, [&](int64_t begin, int64_t end) {
    std::memcpy(dst + begin, src + begin, static_cast<size_t>(end - begin));
  });
}

}  // namespace brigade::engine::onnx
