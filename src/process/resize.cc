#include "process/resize.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/strings.h"

namespace brigade::process {
namespace {

// Pillow's filters (libImaging/Resample.c): the function and its support at scale 1.
double FilterValue(ResizeFilter filter, double x) {
  if (filter == ResizeFilter::kArea) return x > -0.5 && x <= 0.5 ? 1.0 : 0.0;
  if (x < 0.0) x = -x;
  return x < 1.0 ? 1.0 - x : 0.0;
}

double FilterSupport(ResizeFilter filter) { return filter == ResizeFilter::kArea ? 0.5 : 1.0; }

inline uint8_t Clip8(int32_t value) {
  const int32_t shifted = value >> kResamplePrecisionBits;
  return static_cast<uint8_t>(std::clamp(shifted, 0, 255));
}

// One output row's worth of horizontal resampling for `rows` rows: dst[y][x] from
// src[y][first[x] .. first[x] + taps[x]).
__attribute__((target_clones("avx2", "default"))) void HorizontalPass(const uint8_t* src,
                                                                      size_t src_stride, int rows,
                                                                      const ResampleAxis& axis,
                                                                      uint8_t* dst,
                                                                      size_t dst_stride) {
  const int out_width = static_cast<int>(axis.first.size());
  const int32_t* first = axis.first.data();
  const int32_t* taps = axis.taps.data();
  for (int y = 0; y < rows; ++y) {
    const uint8_t* in = src + static_cast<size_t>(y) * src_stride;
    uint8_t* out = dst + static_cast<size_t>(y) * dst_stride;
    for (int x = 0; x < out_width; ++x) {
      const int32_t* k = axis.weights.data() + static_cast<size_t>(x) * axis.max_taps;
      const uint8_t* p = in + static_cast<size_t>(first[x]) * kChannels;
      int32_t s0 = 1 << (kResamplePrecisionBits - 1);
      int32_t s1 = s0;
      int32_t s2 = s0;
      for (int t = 0; t < taps[x]; ++t) {
        s0 += p[3 * t + 0] * k[t];
        s1 += p[3 * t + 1] * k[t];
        s2 += p[3 * t + 2] * k[t];
      }
      out[3 * x + 0] = Clip8(s0);
      out[3 * x + 1] = Clip8(s1);
      out[3 * x + 2] = Clip8(s2);
    }
  }
}

// Vertical resampling: output row i from source rows first[i] - row0 .. + taps[i], whole rows of
// `row_bytes` at a time (the loop the compiler vectorizes). `acc` holds row_bytes int32s.
__attribute__((target_clones("avx2", "default"))) void VerticalPass(
    const uint8_t* src, size_t src_stride, int row0, const ResampleAxis& axis, size_t row_bytes,
    int32_t* acc, uint8_t* dst, size_t dst_stride) {
  const int out_rows = static_cast<int>(axis.first.size());
  for (int i = 0; i < out_rows; ++i) {
    const int32_t* k = axis.weights.data() + static_cast<size_t>(i) * axis.max_taps;
    std::fill(acc, acc + row_bytes, int32_t{1} << (kResamplePrecisionBits - 1));
    for (int t = 0; t < axis.taps[i]; ++t) {
      const uint8_t* in = src + static_cast<size_t>(axis.first[i] - row0 + t) * src_stride;
      const int32_t w = k[t];
      for (size_t b = 0; b < row_bytes; ++b) acc[b] += in[b] * w;
    }
    uint8_t* out = dst + static_cast<size_t>(i) * dst_stride;
    for (size_t b = 0; b < row_bytes; ++b) out[b] = Clip8(acc[b]);
  }
}

}  // namespace

ResampleAxis ComputeResampleAxis(int in_size, int out_size, int out_begin, int count,
                                 ResizeFilter filter) {
  // The arithmetic follows Pillow's precompute_coeffs operation by operation (same doubles, same
  // order), so that every weight, and therefore every pixel, comes out the same.
  const double scale = static_cast<double>(in_size) / out_size;
  const double filterscale = scale < 1.0 ? 1.0 : scale;
  const double support = FilterSupport(filter) * filterscale;
  const int ksize = static_cast<int>(std::ceil(support)) * 2 + 1;
  const double ss = 1.0 / filterscale;
  ResampleAxis axis;
  axis.max_taps = ksize;
  axis.first.resize(count);
  axis.taps.resize(count);
  axis.weights.assign(static_cast<size_t>(count) * ksize, 0);
  std::vector<double> k(ksize);
  for (int i = 0; i < count; ++i) {
    const int xx = out_begin + i;
    const double center = (xx + 0.5) * scale;
    int xmin = static_cast<int>(center - support + 0.5);
    if (xmin < 0) xmin = 0;
    int xmax = static_cast<int>(center + support + 0.5);
    if (xmax > in_size) xmax = in_size;
    xmax -= xmin;
    double ww = 0.0;
    for (int x = 0; x < xmax; ++x) {
      const double w = FilterValue(filter, (x + xmin - center + 0.5) * ss);
      k[x] = w;
      ww += w;
    }
    int32_t* fixed = axis.weights.data() + static_cast<size_t>(i) * ksize;
    for (int x = 0; x < xmax; ++x) {
      const double normalized = ww != 0.0 ? k[x] / ww : k[x];
      fixed[x] = normalized < 0
                     ? static_cast<int32_t>(-0.5 + normalized * (1 << kResamplePrecisionBits))
                     : static_cast<int32_t>(0.5 + normalized * (1 << kResamplePrecisionBits));
    }
    axis.first[i] = xmin;
    axis.taps[i] = xmax;
  }
  return axis;
}

absl::StatusOr<Image> ResizeWindow(const ImageView& source, int out_width, int out_height,
                                   const Window& window, ResizeFilter filter) {
  if (source.pixels == nullptr || source.width <= 0 || source.height <= 0 ||
      source.width > kMaxResizeDimension || source.height > kMaxResizeDimension ||
      source.stride_bytes < static_cast<size_t>(source.width) * kChannels) {
    return absl::InvalidArgumentError(
        StrCat("resize: invalid source image ", source.width, "x", source.height));
  }
  if (out_width <= 0 || out_height <= 0 || out_width > kMaxResizeDimension ||
      out_height > kMaxResizeDimension) {
    return absl::InvalidArgumentError(
        StrCat("resize: invalid output size ", out_width, "x", out_height));
  }
  if (window.width <= 0 || window.height <= 0 || window.x < 0 || window.y < 0 ||
      window.x > out_width - window.width || window.y > out_height - window.height) {
    return absl::InvalidArgumentError(StrCat("resize: window ", window.width, "x", window.height,
                                             "+", window.x, "+", window.y, " is not inside ",
                                             out_width, "x", out_height));
  }
  const bool horizontal = source.width != out_width;
  const bool vertical = source.height != out_height;

  // The source rows the vertical pass reads (all of the window's rows when there is none).
  ResampleAxis v_axis;
  int row0 = window.y;
  int row_end = window.y + window.height;
  if (vertical) {
    v_axis = ComputeResampleAxis(source.height, out_height, window.y, window.height, filter);
    row0 = v_axis.first.front();
    row_end = row0;
    for (int i = 0; i < window.height; ++i) {
      row0 = std::min(row0, v_axis.first[i]);
      row_end = std::max(row_end, v_axis.first[i] + v_axis.taps[i]);
    }
  }
  const size_t row_bytes = static_cast<size_t>(window.width) * kChannels;

  // Horizontal pass into an intermediate of the needed rows, or a view of the source columns.
  std::vector<uint8_t> intermediate;
  const uint8_t* mid = source.row(row0) + static_cast<size_t>(window.x) * kChannels;
  size_t mid_stride = source.stride_bytes;
  if (horizontal) {
    const ResampleAxis h_axis =
        ComputeResampleAxis(source.width, out_width, window.x, window.width, filter);
    intermediate.resize(static_cast<size_t>(row_end - row0) * row_bytes);
    HorizontalPass(source.row(row0), source.stride_bytes, row_end - row0, h_axis,
                   intermediate.data(), row_bytes);
    mid = intermediate.data();
    mid_stride = row_bytes;
  }

  Image out;
  out.width = window.width;
  out.height = window.height;
  out.pixels.resize(row_bytes * window.height);
  if (vertical) {
    std::vector<int32_t> acc(row_bytes);
    VerticalPass(mid, mid_stride, row0, v_axis, row_bytes, acc.data(), out.pixels.data(),
                 row_bytes);
  } else {
    for (int y = 0; y < window.height; ++y) {
      std::memcpy(out.pixels.data() + y * row_bytes, mid + y * mid_stride, row_bytes);
    }
  }
  return out;
}

}  // namespace brigade::process
