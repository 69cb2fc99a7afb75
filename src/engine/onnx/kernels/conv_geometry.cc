#include "engine/onnx/kernels/conv_geometry.h"

#include <string>

#include "core/tensor.h"

namespace brigade::engine::onnx {
namespace {

absl::Status ReadCommon(const KernelContext& ctx, size_t spatial, ConvGeometry* g) {
  const AttributeMap& attrs = ctx.node->attributes;
  auto read = [&](std::string_view name, int64_t fill, std::vector<int64_t>* out) {
    const auto values = attrs.GetInts(name);
    if (values.empty()) {
      out->assign(spatial, fill);
    } else {
      out->assign(values.begin(), values.end());
    }
  };
  read("strides", 1, &g->strides);
  read("dilations", 1, &g->dilations);
  if (g->strides.size() != spatial || g->dilations.size() != spatial) {
    return ctx.Error("strides/dilations need ", spatial, " entries");
  }
  for (size_t i = 0; i < spatial; ++i) {
    if (g->strides[i] <= 0 || g->dilations[i] <= 0 || g->kernel[i] <= 0) {
      return ctx.Error("kernel, strides and dilations must be positive");
    }
    if (g->strides[i] > kMaxWindowValue || g->dilations[i] > kMaxWindowValue ||
        g->kernel[i] > kMaxWindowValue) {
      return ctx.Error("kernel, strides and dilations must be at most ", kMaxWindowValue);
    }
  }
  const auto pads = attrs.GetInts("pads");
  if (pads.empty()) {
    g->pad_begin.assign(spatial, 0);
    g->pad_end.assign(spatial, 0);
  } else {
    if (pads.size() != 2 * spatial) return ctx.Error("pads need ", 2 * spatial, " entries");
    g->pad_begin.assign(pads.begin(), pads.begin() + static_cast<int64_t>(spatial));
    g->pad_end.assign(pads.begin() + static_cast<int64_t>(spatial), pads.end());
    for (int64_t p : pads) {
      if (p < 0) return ctx.Error("negative pads");
      if (p > kMaxWindowValue) return ctx.Error("pads must be at most ", kMaxWindowValue);
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ConvGeometry> ForwardGeometry(const KernelContext& ctx, const Shape& input,
                                             std::vector<int64_t> kernel, bool ceil_mode) {
  if (input.size() < 3) return ctx.Error("input must have rank >= 3, got ", input.size());
  const size_t spatial = input.size() - 2;
  if (kernel.size() != spatial) return ctx.Error("kernel needs ", spatial, " dims");
  ConvGeometry g;
  g.kernel = std::move(kernel);
  if (absl::Status s = ReadCommon(ctx, spatial, &g); !s.ok()) return s;
  const std::string auto_pad = ctx.node->attributes.GetString("auto_pad", "NOTSET");
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t in = input[i + 2];
    const int64_t extent = g.dilations[i] * (g.kernel[i] - 1) + 1;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const int64_t out = (in + g.strides[i] - 1) / g.strides[i];
      const int64_t total = std::max<int64_t>(0, (out - 1) * g.strides[i] + extent - in);
      g.pad_begin[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      g.pad_end[i] = total - g.pad_begin[i];
    } else if (auto_pad == "VALID") {
      g.pad_begin[i] = g.pad_end[i] = 0;
    } else if (auto_pad != "NOTSET") {
      return ctx.Error("unknown auto_pad '", auto_pad, "'");
    }
    const int64_t span = in + g.pad_begin[i] + g.pad_end[i] - extent;
    if (span < 0) return ctx.Error("kernel is larger than the padded input");
    int64_t out =
        ceil_mode ? (span + g.strides[i] - 1) / g.strides[i] + 1 : span / g.strides[i] + 1;
    // With ceil_mode, the last window must start inside the input or its left padding.
    if (ceil_mode && (out - 1) * g.strides[i] >= in + g.pad_begin[i]) --out;
    g.output.push_back(out);
  }
  return g;
}

absl::StatusOr<ConvGeometry> TransposedGeometry(const KernelContext& ctx, const Shape& input,
                                                std::vector<int64_t> kernel) {
  if (input.size() < 3) return ctx.Error("input must have rank >= 3, got ", input.size());
  const size_t spatial = input.size() - 2;
  if (kernel.size() != spatial) return ctx.Error("kernel needs ", spatial, " dims");
  ConvGeometry g;
  g.kernel = std::move(kernel);
  if (absl::Status s = ReadCommon(ctx, spatial, &g); !s.ok()) return s;
  const AttributeMap& attrs = ctx.node->attributes;
  std::vector<int64_t> output_padding(attrs.GetInts("output_padding").begin(),
                                      attrs.GetInts("output_padding").end());
  if (output_padding.empty()) output_padding.assign(spatial, 0);
  if (output_padding.size() != spatial) return ctx.Error("output_padding needs ", spatial, " dims");
  for (int64_t p : output_padding) {
    if (p < 0 || p > kMaxWindowValue) {
      return ctx.Error("output_padding must be in [0, ", kMaxWindowValue, "]");
    }
  }
  const auto output_shape = attrs.GetInts("output_shape");
  for (int64_t d : output_shape) {
    if (d < 0 || static_cast<uint64_t>(d) > kMaxTensorBytes) {
      return ctx.Error("output_shape entry ", d, " is out of range");
    }
  }
  const std::string auto_pad = attrs.GetString("auto_pad", "NOTSET");
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t in = input[i + 2];
    const int64_t extent = g.dilations[i] * (g.kernel[i] - 1) + 1;
    const int64_t full = g.strides[i] * (in - 1) + output_padding[i] + extent;
    int64_t want = -1;
    if (!output_shape.empty()) {
      // output_shape may list all dims or only the spatial ones.
      want = output_shape.size() == spatial ? output_shape[i]
                                            : output_shape[output_shape.size() - spatial + i];
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      want = in * g.strides[i];
    }
    if (want >= 0) {
      const int64_t total = full - want;
      if (total < 0) {
        // A larger output_shape extends the output at the end (rows no window reaches).
        g.pad_begin[i] = 0;
        g.pad_end[i] = total;
      } else if (auto_pad == "SAME_UPPER") {
        g.pad_begin[i] = total / 2;
        g.pad_end[i] = total - total / 2;
      } else {
        g.pad_begin[i] = total - total / 2;
        g.pad_end[i] = total / 2;
      }
    } else if (auto_pad == "VALID") {
      g.pad_begin[i] = g.pad_end[i] = 0;
    }
    const int64_t out = full - g.pad_begin[i] - g.pad_end[i];
    if (out <= 0) return ctx.Error("non-positive output size");
    g.output.push_back(out);
  }
  return g;
}

}  // namespace brigade::engine::onnx
