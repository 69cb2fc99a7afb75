// Data movement ops: Cast, Transpose, Concat, Split, Expand, Tile, Pad.

#include <cstring>
#include <memory>
#include <numeric>
#include <span>
#include <type_traits>

#include "core/status_macros.h"
#include "engine/onnx/ir/onnx_types.h"
#include "engine/onnx/kernels/broadcast.h"
#include "engine/onnx/kernels/dnnl_util.h"
#include "engine/onnx/kernels/half.h"
#include "engine/onnx/kernels/kernel_util.h"
#include "engine/onnx/kernels/registry.h"

namespace brigade::engine::onnx {
namespace {

// ---------------------------------------------------------------------------------------------
// Cast

// Reads element i of a buffer of `type` as double (fp16/bf16 included).
template <typename To>
void ConvertAll(DataType from, const std::byte* in, To* out, int64_t n) {
  if (from == DataType::kFp16 || from == DataType::kBf16) {
    const auto* h = reinterpret_cast<const uint16_t*>(in);
    for (int64_t i = 0; i < n; ++i) {
      const float f = from == DataType::kFp16 ? HalfToFloat(h[i]) : Bf16ToFloat(h[i]);
      if constexpr (std::is_same_v<To, bool>) {
        out[i] = f != 0.0f;
      } else {
        out[i] = static_cast<To>(f);
      }
    }
    return;
  }
  VisitNumeric(from, [&]<typename From>() {
    const From* src = reinterpret_cast<const From*>(in);
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_same_v<To, bool>) {
        out[i] = src[i] != From(0);
      } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
        // Float → int: out-of-range is undefined in C++; saturate NaN to 0 and clamp.
        const double v = static_cast<double>(src[i]);
        if (!(v == v)) {
          out[i] = 0;
        } else if (v <= static_cast<double>(std::numeric_limits<To>::lowest())) {
          out[i] = std::numeric_limits<To>::lowest();
        } else if (v >= static_cast<double>(std::numeric_limits<To>::max())) {
          out[i] = std::numeric_limits<To>::max();
        } else {
          out[i] = static_cast<To>(src[i]);
        }
      } else {
        out[i] = static_cast<To>(src[i]);
      }
    }
  });
}

class CastKernel final : public OpKernel {
 public:
  CastKernel(DataType from, DataType to, int64_t count) : from_(from), to_(to), count_(count) {}

  absl::Status Run(const RunContext& ctx) override {
    const std::byte* in = ctx.inputs[0];
    std::byte* out = ctx.outputs[0];
    if (from_ == to_) {
      std::memcpy(out, in, static_cast<size_t>(count_) * DataTypeSize(to_));
      return absl::OkStatus();
    }
    if (to_ == DataType::kFp16 || to_ == DataType::kBf16) {
      auto* h = reinterpret_cast<uint16_t*>(out);
      // Convert through float element by element (no temporary buffer).
      for (int64_t i = 0; i < count_; ++i) {
        float f = 0;
        ConvertAll<float>(from_, in + static_cast<size_t>(i) * DataTypeSize(from_), &f, 1);
        h[i] = to_ == DataType::kFp16 ? FloatToHalf(f) : FloatToBf16(f);
      }
      return absl::OkStatus();
    }
    VisitNumeric(
        to_, [&]<typename To>() { ConvertAll<To>(from_, in, reinterpret_cast<To*>(out), count_); });
    return absl::OkStatus();
  }

 private:
  const DataType from_, to_;
  const int64_t count_;
};

bool Castable(DataType t) { return t != DataType::kBytes && t != DataType::kInvalid; }

absl::StatusOr<std::unique_ptr<OpKernel>> CreateCast(KernelContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  DataType to = DataType::kInvalid;
  if (ctx.node->op_type == "CastLike") {
    if (!ctx.has_input(1)) return ctx.Error("CastLike needs a target_type input");
    to = ctx.input(1).dtype;
  } else {
    to = FromOnnxDataType(ctx.node->attributes.GetInt("to", 0)).value_or(DataType::kInvalid);
  }
  if (!Castable(x.dtype) || !Castable(to)) {
    return ctx.Unsupported("cast from ", DataTypeName(x.dtype), " to ", DataTypeName(to));
  }
  ctx.SetOutput(0, to, x.shape);
  return std::make_unique<CastKernel>(x.dtype, to, x.num_elements());
}

// ---------------------------------------------------------------------------------------------
// Transpose

class TransposeKernel final : public OpKernel {
 public:
  // `dims`/`in_strides` describe the output's (merged) dimensions and, for each, the input
  // stride in elements.
  TransposeKernel(size_t element, Shape dims, Shape in_strides)
      : element_(element), dims_(std::move(dims)), in_strides_(std::move(in_strides)) {}

  absl::Status Run(const RunContext& ctx) override {
    const size_t rank = dims_.size();
    const int64_t inner = dims_[rank - 1];
    const int64_t inner_stride = in_strides_[rank - 1];
    int64_t rows = 1;
    for (size_t d = 0; d + 1 < rank; ++d) rows *= dims_[d];
    if (rows == 0 || inner == 0) return absl::OkStatus();  // an empty tensor: nothing to move
    const std::byte* in = ctx.inputs[0];
    std::byte* out = ctx.outputs[0];
    ParallelFor(ctx.threads, rows, std::max<int64_t>(1, 4096 / inner), [&](int64_t b, int64_t e) {
      Shape index(rank, 0);
      int64_t rest = b;
      int64_t offset = 0;
      for (size_t d = rank - 1; d-- > 0;) {
        index[d] = rest % dims_[d];
        rest /= dims_[d];
        offset += index[d] * in_strides_[d];
      }
      for (int64_t r = b; r < e; ++r) {
        std::byte* dst = out + static_cast<size_t>(r * inner) * element_;
        if (inner_stride == 1) {
          std::memcpy(dst, in + static_cast<size_t>(offset) * element_,
                      static_cast<size_t>(inner) * element_);
        } else {
          CopyStrided(in, offset, inner_stride, inner, dst);
        }
        for (size_t d = rank - 1; d-- > 0;) {
          ++index[d];
          offset += in_strides_[d];
          if (index[d] < dims_[d]) break;
          offset -= in_strides_[d] * index[d];
          index[d] = 0;
        }
      }
    });
    return absl::OkStatus();
  }

 private:
  void CopyStrided(const std::byte* in, int64_t offset, int64_t stride, int64_t n,
                   std::byte* dst) const {
    switch (element_) {
      case 4: {
        const auto* s = reinterpret_cast<const uint32_t*>(in) + offset;
        auto* d = reinterpret_cast<uint32_t*>(dst);
        for (int64_t i = 0; i < n; ++i) d[i] = s[i * stride];
        break;
      }
      case 8: {
        const auto* s = reinterpret_cast<const uint64_t*>(in) + offset;
        auto* d = reinterpret_cast<uint64_t*>(dst);
        for (int64_t i = 0; i < n; ++i) d[i] = s[i * stride];
        break;
      }
      default:
        for (int64_t i = 0; i < n; ++i) {
          std::memcpy(dst + static_cast<size_t>(i) * element_,
                      in + static_cast<size_t>(offset + i * stride) * element_, element_);
        }
    }
  }

  const size_t element_;
  const Shape dims_;
  const Shape in_strides_;
};

absl::StatusOr<std::unique_ptr<OpKernel>> CreateTranspose(KernelContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  const size_t rank = x.shape.size();
  std::vector<int64_t> perm(ctx.node->attributes.GetInts("perm").begin(),
                            ctx.node->attributes.GetInts("perm").end());
  if (perm.empty()) {
    for (size_t i = 0; i < rank; ++i) perm.push_back(static_cast<int64_t>(rank - 1 - i));
  }
  if (perm.size() != rank) return ctx.Error("perm has ", perm.size(), " entries, rank ", rank);
  std::vector<bool> seen(rank, false);
  Shape out_shape;
  for (int64_t p : perm) {
    if (p < 0) p += static_cast<int64_t>(rank);
    if (p < 0 || p >= static_cast<int64_t>(rank) || seen[static_cast<size_t>(p)]) {
      return ctx.Error("perm is not a permutation");
    }
    seen[static_cast<size_t>(p)] = true;
    out_shape.push_back(x.shape[static_cast<size_t>(p)]);
  }
  ctx.SetOutput(0, x.dtype, out_shape);
  if (DataTypeSize(x.dtype) == 0) return ctx.Unsupported("element type");
  // Merge output dims that are consecutive in the input as well; drop size-1 dims.
  const Shape strides = Strides(x.shape);
  Shape dims, in_strides;
  int64_t last = -2;
  for (size_t i = 0; i < rank; ++i) {
    const auto p =
        static_cast<size_t>(perm[i] < 0 ? perm[i] + static_cast<int64_t>(rank) : perm[i]);
    if (x.shape[p] == 1) continue;
    if (!dims.empty() && static_cast<int64_t>(p) == last + 1 &&
        in_strides.back() == strides[p] * x.shape[p]) {
      dims.back() *= x.shape[p];
      in_strides.back() = strides[p];
    } else {
      dims.push_back(x.shape[p]);
      in_strides.push_back(strides[p]);
    }
    last = static_cast<int64_t>(p);
  }
  if (dims.empty()) {
    dims.push_back(1);
    in_strides.push_back(1);
  }
  return std::make_unique<TransposeKernel>(DataTypeSize(x.dtype), std::move(dims),
                                           std::move(in_strides));
}

// ---------------------------------------------------------------------------------------------
// Concat and Split: blocks of (dim_axis × inner) elements per outer index.

class ConcatKernel final : public OpKernel {
 public:
  ConcatKernel(int64_t outer, std::vector<size_t> block_bytes)
      : outer_(outer), block_bytes_(std::move(block_bytes)) {
    for (size_t b : block_bytes_) row_bytes_ += b;
  }
  absl::Status Run(const RunContext& ctx) override {
    ParallelFor(ctx.threads, outer_,
                std::max<int64_t>(1, (1 << 16) / std::max<size_t>(row_bytes_, 1)),
                [&](int64_t b, int64_t e) {
                  for (int64_t o = b; o < e; ++o) {
                    std::byte* dst = ctx.outputs[0] + static_cast<size_t>(o) * row_bytes_;
                    for (size_t k = 0; k < block_bytes_.size(); ++k) {
                      std::memcpy(dst, ctx.inputs[k] + static_cast<size_t>(o) * block_bytes_[k],
                                  block_bytes_[k]);
                      dst += block_bytes_[k];
                    }
                  }
                });
    return absl::OkStatus();
  }

 private:
  const int64_t outer_;
  const std::vector<size_t> block_bytes_;
  size_t row_bytes_ = 0;
};

// Concat takes its inputs in nChw8c / nChw16c when all of them are in the same canonical block
// layout, the axis is the channels' and every input's channel count is a multiple of the block:
// the blocked layout is then [N, C / block, H, W, block], and concatenating along C / block
// copies the same byte ranges per batch row as the plain layout does, so ConcatKernel serves
// both. DenseNet's 62 Concats had reordered each new feature map to plain (and the BN after each
// read plain).
bool ConcatTakesBlocked(const Node& node, size_t /*input*/,
                        std::span<const ValueInfo* const> inputs) {
  // Past 32 inputs the registry's mask offers none blocked: all or nothing.
  if (inputs.empty() || inputs.size() > 32 || inputs[0] == nullptr) return false;
  const int block = CanonicalChannelBlock(*inputs[0]);
  if (block == 0) return false;
  const int64_t axis = node.attributes.GetInt("axis", 0);
  if (axis != 1 && axis != -3) return false;
  for (const ValueInfo* in : inputs) {
    if (in == nullptr || CanonicalChannelBlock(*in) != block || in->shape[1] % block != 0) {
      return false;
    }
  }
  return true;
}

absl::StatusOr<std::unique_ptr<OpKernel>> CreateConcat(KernelContext& ctx) {
  if (ctx.num_inputs() == 0) return ctx.Error("needs inputs");
  const ValueInfo& first = ctx.input(0);
  const auto rank = static_cast<int64_t>(first.shape.size());
  BRIGADE_ASSIGN_OR_RETURN(int64_t axis,
                           NormalizeAxis(ctx, ctx.node->attributes.GetInt("axis", 0), rank));
  const auto a = static_cast<size_t>(axis);
  Shape out = first.shape;
  out[a] = 0;
  const size_t element = DataTypeSize(first.dtype);
  if (element == 0) return ctx.Unsupported("element type");
  std::vector<size_t> blocks;
  const int64_t inner = DimProduct(first.shape, a + 1, first.shape.size());
  for (size_t k = 0; k < ctx.num_inputs(); ++k) {
    if (!ctx.has_input(k)) return ctx.Error("input ", k, " is missing");
    const ValueInfo& in = ctx.input(k);
    if (in.dtype != first.dtype || in.shape.size() != first.shape.size()) {
      return ctx.Error("input ", k, " does not match input 0 in type or rank");
    }
    for (size_t d = 0; d < in.shape.size(); ++d) {
      if (d != a && in.shape[d] != first.shape[d]) {
        return ctx.Error("input ", k, " shape ", ShapeToString(in.shape), " does not match ",
                         ShapeToString(first.shape), " outside axis ", axis);
      }
    }
    out[a] += in.shape[a];
    blocks.push_back(static_cast<size_t>(in.shape[a] * inner) * element);
  }
  ctx.SetOutput(0, first.dtype, out);
  if (first.layout.blocked) {
    if (!ConcatTakesBlocked(*ctx.node, 0, std::span<const ValueInfo* const>(ctx.inputs))) {
      return ctx.Error("blocked inputs reached the plain concatenation");
    }
    const int block = CanonicalChannelBlock(first);
    ctx.outputs[0].layout =
        Layout{true, dnnl::memory::desc(ToDnnlDims(out), dnnl::memory::data_type::f32,
                                        block == 16 ? dnnl::memory::format_tag::aBcd16b
                                                    : dnnl::memory::format_tag::aBcd8b)};
  }
  return std::make_unique<ConcatKernel>(DimProduct(first.shape, 0, a), std::move(blocks));
}

class SplitKernel final : public OpKernel {
 public:
  SplitKernel(int64_t outer, std::vector<size_t> block_bytes)
      : outer_(outer), block_bytes_(std::move(block_bytes)) {
    for (size_t b : block_bytes_) row_bytes_ += b;
  }
  absl::Status Run(const RunContext& ctx) override {
    for (int64_t o = 0; o < outer_; ++o) {
      const std::byte* src = ctx.inputs[0] + static_cast<size_t>(o) * row_bytes_;
      for (size_t k = 0; k < block_bytes_.size(); ++k) {
        if (ctx.outputs[k] != nullptr) {
          std::memcpy(ctx.outputs[k] + static_cast<size_t>(o) * block_bytes_[k], src,
                      block_bytes_[k]);
        }
        src += block_bytes_[k];
      }
    }
    return absl::OkStatus();
  }

 private:
  const int64_t outer_;
  const std::vector<size_t> block_bytes_;
  size_t row_bytes_ = 0;
};

absl::StatusOr<std::unique_ptr<OpKernel>> CreateSplit(KernelContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  const auto rank = static_cast<int64_t>(x.shape.size());
  BRIGADE_ASSIGN_OR_RETURN(int64_t axis,
                           NormalizeAxis(ctx, ctx.node->attributes.GetInt("axis", 0), rank));
  const auto a = static_cast<size_t>(axis);
  const size_t n = ctx.outputs.size();
  std::vector<int64_t> sizes;
  if (ctx.has_input(1)) {
    BRIGADE_ASSIGN_OR_RETURN(sizes, ConstantInts(ctx, 1));
    if (sizes.size() != n) {
      return ctx.Error("split has ", sizes.size(), " sizes for ", n, " outputs");
    }
  } else {
    const int64_t dim = x.shape[a];
    const auto parts = static_cast<int64_t>(n);
    const int64_t chunk = (dim + parts - 1) / parts;  // opset 18 rule: last part may be smaller
    for (int64_t i = 0; i < parts; ++i) {
      sizes.push_back(std::max<int64_t>(0, std::min(chunk, dim - i * chunk)));
    }
  }
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0) return ctx.Error("negative split size");
    total += s;
  }
  if (total != x.shape[a]) {
    return ctx.Error("split sizes sum to ", total, " but axis ", axis, " has ", x.shape[a]);
  }
  const int64_t inner = DimProduct(x.shape, a + 1, x.shape.size());
  std::vector<size_t> blocks;
  for (size_t k = 0; k < n; ++k) {
    Shape shape = x.shape;
    shape[a] = sizes[k];
    ctx.SetOutput(k, x.dtype, shape);
    blocks.push_back(static_cast<size_t>(sizes[k] * inner) * DataTypeSize(x.dtype));
  }
  return std::make_unique<SplitKernel>(DimProduct(x.shape, 0, a), std::move(blocks));
}

// ---------------------------------------------------------------------------------------------
// Expand: broadcast copy.

class ExpandKernel final : public OpKernel {
 public:
  ExpandKernel(size_t element, BroadcastPlan plan) : element_(element), plan_(std::move(plan)) {}
  absl::Status Run(const RunContext& ctx) override {
    const int64_t length = plan_.row_length();
    const bool contiguous = plan_.inner_stride(0) != 0;
    ParallelFor(ctx.threads, plan_.rows(), std::max<int64_t>(1, 4096 / length),
                [&](int64_t b, int64_t e) {
                  plan_.ForRows(b, e, [&](int64_t r, const auto& o) {
                    std::byte* dst = ctx.outputs[0] + static_cast<size_t>(r * length) * element_;
                    const std::byte* src = ctx.inputs[0] + static_cast<size_t>(o[0]) * element_;
                    if (contiguous) {
                      std::memcpy(dst, src, static_cast<size_t>(length) * element_);
                    } else {
                      for (int64_t i = 0; i < length; ++i) {
                        std::memcpy(dst + static_cast<size_t>(i) * element_, src, element_);
                      }
                    }
                  });
                });
    return absl::OkStatus();
  }

 private:
  const size_t element_;
  const BroadcastPlan plan_;
};

absl::StatusOr<std::unique_ptr<OpKernel>> CreateExpand(KernelContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  BRIGADE_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ConstantInts(ctx, 1));
  Shape target(dims.begin(), dims.end());
  BRIGADE_ASSIGN_OR_RETURN(Shape out, BroadcastShapes(ctx, x.shape, target));
  if (DataTypeSize(x.dtype) == 0) return ctx.Unsupported("element type");
  ctx.SetOutput(0, x.dtype, out);
  const Shape shapes[] = {x.shape};
  return std::make_unique<ExpandKernel>(DataTypeSize(x.dtype), BroadcastPlan(out, shapes));
}

// ---------------------------------------------------------------------------------------------
// Tile and Pad: every output element maps to one input element (or a pad value); the mapping
// is computed per output row, and rows are copied in runs.

class TileKernel final : public OpKernel {
 public:
  TileKernel(size_t element, Shape in_shape, Shape out_shape)
      : element_(element), in_(std::move(in_shape)), out_(std::move(out_shape)) {}

  absl::Status Run(const RunContext& ctx) override {
    const size_t rank = out_.size();
    const Shape in_strides = Strides(in_);
    const int64_t inner_in = in_[rank - 1];
    const int64_t inner_out = out_[rank - 1];
    int64_t rows = 1;
    for (size_t d = 0; d + 1 < rank; ++d) rows *= out_[d];
    for (int64_t r = 0; r < rows; ++r) {
      int64_t rest = r, offset = 0;
      for (size_t d = rank - 1; d-- > 0;) {
        offset += (rest % out_[d]) % in_[d] * in_strides[d];
        rest /= out_[d];
      }
      std::byte* dst = ctx.outputs[0] + static_cast<size_t>(r * inner_out) * element_;
      const std::byte* src = ctx.inputs[0] + static_cast<size_t>(offset) * element_;
      for (int64_t done = 0; done < inner_out; done += inner_in) {
        std::memcpy(dst + static_cast<size_t>(done) * element_, src,
                    static_cast<size_t>(inner_in) * element_);
      }
    }
    return absl::OkStatus();
  }

 private:
  const size_t element_;
  const Shape in_, out_;
};

absl::StatusOr<std::unique_ptr<OpKernel>> CreateTile(KernelContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  BRIGADE_ASSIGN_OR_RETURN(std::vector<int64_t> repeats, ConstantInts(ctx, 1));
  if (repeats.size() != x.shape.size()) return ctx.Error("repeats must have one entry per dim");
  Shape out;
  for (size_t i = 0; i < repeats.size(); ++i) {
    if (repeats[i] < 0) return ctx.Error("negative repeat");
    int64_t d = 0;
    if (__builtin_mul_overflow(x.shape[i], repeats[i], &d)) {
      return ctx.Error("repeats ", repeats[i], " of dimension ", x.shape[i], " overflow");
    }
    out.push_back(d);
  }
  BRIGADE_RETURN_IF_ERROR(CheckShapeSize(ctx, out));
  ctx.SetOutput(0, x.dtype, out);
  if (DataTypeSize(x.dtype) == 0) return ctx.Unsupported("element type");
  Shape in = x.shape;
  if (in.empty()) {
    in.push_back(1);
    out.push_back(1);
  }
  for (int64_t d : out) {
    if (d == 0) return std::make_unique<TileKernel>(DataTypeSize(x.dtype), Shape{1}, Shape{0});
  }
  return std::make_unique<TileKernel>(DataTypeSize(x.dtype), std::move(in), std::move(out));
}

enum class PadMode { kConstant, kReflect, kEdge, kWrap };

class PadKernel final : public OpKernel {
 public:
  PadKernel(DataType dtype, PadMode mode, Shape in, Shape out, std::vector<int64_t> begins,
            bool runtime_value, double value)
      : dtype_(dtype),
        mode_(mode),
        in_(std::move(in)),
        out_(std::move(out)),
        begins_(std::move(begins)),
        runtime_value_(runtime_value),
        value_(value) {
    // Source index of every position of the innermost output row, computed once.
    const size_t rank = out_.size();
    for (int64_t o = 0; o < out_[rank - 1]; ++o) inner_map_.push_back(Source(rank - 1, o));
  }

  absl::Status Run(const RunContext& ctx) override {
    VisitNumeric(dtype_, [&]<typename T>() { RunTyped<T>(ctx); });
    return absl::OkStatus();
  }

 private:
  // Source coordinate for output coordinate `o` along dim d, or -1 for a constant pad.
  int64_t Source(size_t d, int64_t o) const {
    const int64_t n = in_[d];
    int64_t i = o - begins_[d];
    if (i >= 0 && i < n) return i;
    switch (mode_) {
      case PadMode::kConstant:
        return -1;
      case PadMode::kEdge:
        return i < 0 ? 0 : n - 1;
      case PadMode::kWrap:
        return ((i % n) + n) % n;
      case PadMode::kReflect: {
        if (n == 1) return 0;
        const int64_t period = 2 * (n - 1);
        int64_t m = ((i % period) + period) % period;
        return m < n ? m : period - m;
      }
    }
    return -1;
  }

  template <typename T>
  void RunTyped(const RunContext& ctx) {
    T pad = static_cast<T>(value_);
    if (runtime_value_) pad = *ctx.in<T>(2);
    const T* in = ctx.in<T>(0);
    T* out = ctx.out<T>(0);
    const size_t rank = out_.size();
    const Shape in_strides = Strides(in_);
    const int64_t inner = out_[rank - 1];
    int64_t rows = 1;
    for (size_t d = 0; d + 1 < rank; ++d) rows *= out_[d];
    const std::vector<int64_t>& inner_map = inner_map_;
    for (int64_t r = 0; r < rows; ++r) {
      int64_t rest = r, offset = 0;
      bool padded = false;
      for (size_t d = rank - 1; d-- > 0;) {
        const int64_t s = Source(d, rest % out_[d]);
        rest /= out_[d];
        if (s < 0) padded = true;
        offset += s * in_strides[d];
      }
      T* dst = out + r * inner;
      for (int64_t o = 0; o < inner; ++o) {
        const int64_t s = inner_map[static_cast<size_t>(o)];
        dst[o] = padded || s < 0 ? pad : in[offset + s];
      }
    }
  }

  const DataType dtype_;
  const PadMode mode_;
  const Shape in_, out_;
  const std::vector<int64_t> begins_;
  const bool runtime_value_;
  const double value_;
  std::vector<int64_t> inner_map_;
};

absl::StatusOr<std::unique_ptr<OpKernel>> CreatePad(KernelContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  const size_t rank = x.shape.size();
  BRIGADE_ASSIGN_OR_RETURN(std::vector<int64_t> pads, ConstantInts(ctx, 1));
  std::vector<int64_t> axes;
  if (ctx.has_input(3)) {
    BRIGADE_ASSIGN_OR_RETURN(axes, ConstantInts(ctx, 3));
  } else {
    for (size_t i = 0; i < rank; ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (pads.size() != 2 * axes.size()) return ctx.Error("pads must have 2 entries per axis");
  std::vector<int64_t> begins(rank, 0), ends(rank, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    BRIGADE_ASSIGN_OR_RETURN(int64_t a, NormalizeAxis(ctx, axes[i], static_cast<int64_t>(rank)));
    begins[static_cast<size_t>(a)] = pads[i];
    ends[static_cast<size_t>(a)] = pads[i + axes.size()];
  }
  const std::string mode_name = ctx.node->attributes.GetString("mode", "constant");
  PadMode mode = PadMode::kConstant;
  if (mode_name == "reflect") {
    mode = PadMode::kReflect;
  } else if (mode_name == "edge") {
    mode = PadMode::kEdge;
  } else if (mode_name == "wrap") {
    mode = PadMode::kWrap;
  } else if (mode_name != "constant") {
    return ctx.Error("unknown mode '", mode_name, "'");
  }
  Shape out;
  for (size_t d = 0; d < rank; ++d) {
    int64_t size = 0;
    if (__builtin_add_overflow(x.shape[d], begins[d], &size) ||
        __builtin_add_overflow(size, ends[d], &size)) {
      return ctx.Error("pads of dimension ", d, " overflow");
    }
    if (size < 0) return ctx.Error("pads make dimension ", d, " negative");
    if (mode != PadMode::kConstant && x.shape[d] == 0 && size > 0) {
      return ctx.Error("cannot ", mode_name, "-pad an empty dimension");
    }
    out.push_back(size);
  }
  BRIGADE_RETURN_IF_ERROR(CheckShapeSize(ctx, out));
  ctx.SetOutput(0, x.dtype, out);
  if (x.dtype == DataType::kBool || !VisitNumeric(x.dtype, []<typename T>() {})) {
    return ctx.Unsupported("element type ", DataTypeName(x.dtype));
  }
  double value = 0;
  bool runtime_value = false;
  if (ctx.has_input(2)) {
    if (ctx.input(2).constant != nullptr) {
      BRIGADE_ASSIGN_OR_RETURN(value, ConstantScalar(ctx, 2));
    } else {
      runtime_value = true;
    }
  }
  Shape in = x.shape;
  if (rank == 0 || DimProduct(out, 0, out.size()) == 0) {
    return std::make_unique<PadKernel>(x.dtype, mode, Shape{1}, Shape{0}, std::vector<int64_t>{0},
                                       false, 0);
  }
  return std::make_unique<PadKernel>(x.dtype, mode, std::move(in), std::move(out),
                                     std::move(begins), runtime_value, value);
}

}  // namespace

void RegisterTensorKernels(KernelRegistry* registry) {
  auto add = [&](std::string op, KernelFactory create, uint32_t values) {
    KernelDef def;
    def.op_type = std::move(op);
    def.create = create;
    def.value_inputs = values;
    registry->Add(std::move(def));
  };
  add("Cast", &CreateCast, 0);
  add("CastLike", &CreateCast, 0);
  add("Transpose", &CreateTranspose, 0);
  KernelDef concat;
  concat.op_type = "Concat";
  concat.create = &CreateConcat;
  concat.blocked_inputs = ~uint32_t{0};
  concat.takes_blocked = &ConcatTakesBlocked;
  registry->Add(std::move(concat));
  add("Split", &CreateSplit, Inputs({1}));
  add("Expand", &CreateExpand, Inputs({1}));
  add("Tile", &CreateTile, Inputs({1}));
  add("Pad", &CreatePad, Inputs({1, 3}));
}

}  // namespace brigade::engine::onnx
