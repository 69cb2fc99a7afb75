// DepthToSpace (opsets 1, 11, 13: DCR and CRD modes) and SpaceToDepth (1, 13): moving blocks of
// channels to space and back, as super-resolution heads (pixel shuffle) and detector stems export
// them.
//
// Both are a fixed permutation of a 6-D view of the 4-D input, so the factory computes the output
// shape and the input stride of each of the six output dims, and Run() copies output rows (the
// innermost dim, the block or the width) with those strides. A block size that is not positive
// or does not divide the dims fails the plan with INVALID_ARGUMENT naming the node and attribute.
// Thread safety: one kernel runs on one thread at a time, with up to `threads` threads inside.
// Run() allocates nothing.

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <string>

#include "core/status_macros.h"
#include "engine/onnx/kernels/kernel_util.h"
#include "engine/onnx/kernels/registry.h"

namespace brigade::engine::onnx {
namespace {

// out[i0..i5] = in[Σ i_d · in_strides[d]], the output walked in row-major order of `dims`.
class SpaceDepthKernel final : public OpKernel {
 public:
  SpaceDepthKernel(size_t element, std::array<int64_t, 6> dims, std::array<int64_t, 6> strides)
      : element_(element), dims_(dims), strides_(strides) {}

  absl::Status Run(const RunContext& ctx) override {
    const int64_t inner = dims_[5], inner_stride = strides_[5];
    const int64_t rows = dims_[0] * dims_[1] * dims_[2] * dims_[3] * dims_[4];
    ParallelFor(ctx.threads, rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(inner, 1)),
                [&](int64_t begin, int64_t end) {
                  for (int64_t r = begin; r < end; ++r) {
                    int64_t rest = r, offset = 0;
                    for (size_t d = 5; d-- > 0;) {
                      offset += rest % dims_[d] * strides_[d];
                      rest /= dims_[d];
                    }
                    std::byte* dst = ctx.outputs[0] + static_cast<size_t>(r * inner) * element_;
                    const std::byte* src = ctx.inputs[0];
                    if (element_ == 4) {
                      const auto* s = reinterpret_cast<const uint32_t*>(src) + offset;
                      auto* o = reinterpret_cast<uint32_t*>(dst);
                      for (int64_t i = 0; i < inner; ++i) o[i] = s[i * inner_stride];
                    } else {
                      for (int64_t i = 0; i < inner; ++i) {
                        std::memcpy(dst + static_cast<size_t>(i) * element_,
                                    src + static_cast<size_t>(offset + i * inner_stride) * element_,
                                    element_);
                      }
                    }
                  }
                });
    return absl::OkStatus();
  }

 private:
  const size_t element_;
  const std::array<int64_t, 6> dims_, strides_;
};

// The 6-D view `view` of the input, permuted by `perm`, as (dims, input strides) of the output.
std::unique_ptr<OpKernel> MakeSpaceDepthKernel(size_t element, const std::array<int64_t, 6>& view,
                                               const std::array<size_t, 6>& perm) {
  std::array<int64_t, 6> view_strides{};
  int64_t stride = 1;
  for (size_t d = 6; d-- > 0;) {
    view_strides[d] = stride;
    stride *= view[d];
  }
  std::array<int64_t, 6> dims{}, strides{};
  for (size_t d = 0; d < 6; ++d) {
    dims[d] = view[perm[d]];
    strides[d] = view_strides[perm[d]];
  }
  return std::make_unique<SpaceDepthKernel>(element, dims, strides);
}

absl::StatusOr<int64_t> SpaceDepthBlockSize(const KernelContext& ctx) {
  if (ctx.input(0).shape.size() != 4) {
    return ctx.Error("input must be 4-D [N, C, H, W], not ", ShapeToString(ctx.input(0).shape));
  }
  if (!ctx.node->attributes.Has("blocksize")) return ctx.Error("attribute 'blocksize' is missing");
  const int64_t b = ctx.node->attributes.GetInt("blocksize", 0);
  // Bounded so that b * b cannot overflow; a larger block divides no real dimension anyway.
  if (b <= 0 || b > (int64_t{1} << 31)) {
    return ctx.Error("attribute 'blocksize' is ", b, ", not a positive size");
  }
  if (DataTypeSize(ctx.input(0).dtype) == 0) {
    return ctx.Unsupported("element type ", DataTypeName(ctx.input(0).dtype));
  }
  return b;
}

absl::StatusOr<std::unique_ptr<OpKernel>> CreateDepthToSpace(KernelContext& ctx) {
  BRIGADE_ASSIGN_OR_RETURN(int64_t b, SpaceDepthBlockSize(ctx));
  const ValueInfo& x = ctx.input(0);
  const int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], w = x.shape[3];
  if (c % (b * b) != 0) {
    return ctx.Error("channels (", c, ") are not a multiple of blocksize² (", b * b, ")");
  }
  const std::string mode = ctx.node->attributes.GetString("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") {
    return ctx.Error("attribute 'mode' is '", mode, "', not DCR or CRD");
  }
  const int64_t c_out = c / (b * b);
  int64_t h_out = 0, w_out = 0;
  if (__builtin_mul_overflow(h, b, &h_out) || __builtin_mul_overflow(w, b, &w_out)) {
    return ctx.Error("blocksize ", b, " overflows the output's height or width");
  }
  Shape out{n, c_out, h_out, w_out};
  BRIGADE_RETURN_IF_ERROR(CheckShapeSize(ctx, out));
  ctx.SetOutput(0, x.dtype, out);
  const size_t element = DataTypeSize(x.dtype);
  // Output [N, C', H, b, W, b]. DCR reads the channels as [b, b, C'] (the block outermost), CRD
  // as [C', b, b].
  if (mode == "DCR") {
    return MakeSpaceDepthKernel(element, {n, b, b, c_out, h, w}, {0, 3, 4, 1, 5, 2});
  }
  return MakeSpaceDepthKernel(element, {n, c_out, b, b, h, w}, {0, 1, 4, 2, 5, 3});
}

absl::StatusOr<std::unique_ptr<OpKernel>> CreateSpaceToDepth(KernelContext& ctx) {
  BRIGADE_ASSIGN_OR_RETURN(int64_t b, SpaceDepthBlockSize(ctx));
  const ValueInfo& x = ctx.input(0);
  const int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], w = x.shape[3];
  if (h % b != 0 || w % b != 0) {
    return ctx.Error("height and width (", h, ", ", w, ") are not multiples of blocksize ", b);
  }
  int64_t c_out = 0;
  if (__builtin_mul_overflow(c, b * b, &c_out)) {
    return ctx.Error("blocksize ", b, " overflows the output's channels");
  }
  Shape out{n, c_out, h / b, w / b};
  BRIGADE_RETURN_IF_ERROR(CheckShapeSize(ctx, out));
  ctx.SetOutput(0, x.dtype, out);
  // Input [N, C, H/b, b, W/b, b] → output [N, b, b, C, H/b, W/b].
  return MakeSpaceDepthKernel(DataTypeSize(x.dtype), {n, c, h / b, b, w / b, b},
                              {0, 3, 5, 1, 2, 4});
}

}  // namespace

void RegisterSpaceDepthKernels(KernelRegistry* registry) {
  KernelDef d2s;
  d2s.op_type = "DepthToSpace";
  d2s.create = &CreateDepthToSpace;
  registry->Add(d2s);
  KernelDef s2d;
  s2d.op_type = "SpaceToDepth";
  s2d.create = &CreateSpaceToDepth;
  registry->Add(s2d);
}

}  // namespace brigade::engine::onnx
