#include "process/resize.h"

#include <immintrin.h>

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

// Pillow's normalize_coeffs_8bpc: truncates w * 2^22 +- 0.5, in the same doubles as Pillow, so
// the weights are Pillow's (lround differs where x + 0.5 itself rounds up).
int32_t ToFixedPoint(double w) {
  const double scaled = w * (1 << kResamplePrecisionBits);
  return static_cast<int32_t>(scaled < 0 ? scaled - 0.5
                                         : scaled + 0.5);  // NOLINT(bugprone-incorrect-roundings)
}

inline uint8_t Clip8(int32_t value) {
  const int32_t shifted = value >> kResamplePrecisionBits;
  return static_cast<uint8_t>(std::clamp(shifted, 0, 255));
}

// Horizontal resampling of `rows` rows: dst[y][x] from src[y][first[x] .. first[x] + taps[x]).
// Integer sums do not depend on the order of their terms, so any schedule gives PIL's bytes.
// The main path pads every output to the same K taps (zero weights; windows at the right edge
// are moved left so they stay inside the row), which lets the compiler unroll the tap loop for
// the common K (and runs any K with K = 0); rows go eight at a time with AVX2 when the CPU has it,
// otherwise (and for the last rows) two at a time.
template <int K>
__attribute__((always_inline)) inline void HorizontalRows(int runtime_taps, const uint8_t* in0,
                                                          const uint8_t* in1, int out_width,
                                                          const int32_t* first,
                                                          const int32_t* weights, uint8_t* out0,
                                                          uint8_t* out1) {
  const int taps = K > 0 ? K : runtime_taps;  // K = 0: any number, known at run time
  for (int x = 0; x < out_width; ++x) {
    const int32_t* k = weights + static_cast<size_t>(x) * taps;
    const uint8_t* p = in0 + static_cast<size_t>(first[x]) * kChannels;
    const uint8_t* q = in1 + static_cast<size_t>(first[x]) * kChannels;
    int32_t a0 = 1 << (kResamplePrecisionBits - 1);
    int32_t a1 = a0, a2 = a0, b0 = a0, b1 = a0, b2 = a0;
    for (int t = 0; t < taps; ++t) {
      a0 += p[3 * t + 0] * k[t];
      a1 += p[3 * t + 1] * k[t];
      a2 += p[3 * t + 2] * k[t];
      b0 += q[3 * t + 0] * k[t];
      b1 += q[3 * t + 1] * k[t];
      b2 += q[3 * t + 2] * k[t];
    }
    out0[3 * x + 0] = Clip8(a0);
    out0[3 * x + 1] = Clip8(a1);
    out0[3 * x + 2] = Clip8(a2);
    out1[3 * x + 0] = Clip8(b0);
    out1[3 * x + 1] = Clip8(b1);
    out1[3 * x + 2] = Clip8(b2);
  }
}

// Eight rows at once with AVX2: the rows' bytes of the used span are transposed into `lanes`
// (for each source byte, its eight rows side by side as int32), so each tap is one 8-lane
// multiply-add per channel. Picked at run time when the CPU has AVX2.
template <int K>
__attribute__((target("avx2"))) void HorizontalEightRowsAvx2(int runtime_taps, const uint8_t* src,
                                                             size_t src_stride, int span_begin,
                                                             int span_end, int out_width,
                                                             const int32_t* first,
                                                             const int32_t* weights, int32_t* lanes,
                                                             uint8_t* dst, size_t dst_stride) {
  const int taps = K > 0 ? K : runtime_taps;  // K = 0: any number, known at run time
  constexpr int kRows = 8;
  const int begin_byte = span_begin * kChannels;
  const int span_bytes = (span_end - span_begin) * kChannels;
  const uint8_t* rows[kRows];
  for (int r = 0; r < kRows; ++r) rows[r] = src + static_cast<size_t>(r) * src_stride + begin_byte;
  int j = 0;
  for (; j + 8 <= span_bytes; j += 8) {
    // An 8x8 byte transpose: d[i] holds bytes j+2i and j+2i+1 of the eight rows.
    __m128i a[kRows];
    for (int r = 0; r < kRows; ++r) {
      a[r] = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(rows[r] + j));
    }
    const __m128i b0 = _mm_unpacklo_epi8(a[0], a[1]);
    const __m128i b1 = _mm_unpacklo_epi8(a[2], a[3]);
    const __m128i b2 = _mm_unpacklo_epi8(a[4], a[5]);
    const __m128i b3 = _mm_unpacklo_epi8(a[6], a[7]);
    const __m128i c0 = _mm_unpacklo_epi16(b0, b1);
    const __m128i c1 = _mm_unpackhi_epi16(b0, b1);
    const __m128i c2 = _mm_unpacklo_epi16(b2, b3);
    const __m128i c3 = _mm_unpackhi_epi16(b2, b3);
    const __m128i d[4] = {_mm_unpacklo_epi32(c0, c2), _mm_unpackhi_epi32(c0, c2),
                          _mm_unpacklo_epi32(c1, c3), _mm_unpackhi_epi32(c1, c3)};
    int32_t* out = lanes + static_cast<size_t>(j) * kRows;
    for (int i = 0; i < 4; ++i) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + static_cast<size_t>(2 * i) * kRows),
                          _mm256_cvtepu8_epi32(d[i]));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + static_cast<size_t>(2 * i + 1) * kRows),
                          _mm256_cvtepu8_epi32(_mm_srli_si128(d[i], 8)));
    }
  }
  for (; j < span_bytes; ++j) {
    for (int r = 0; r < kRows; ++r) lanes[static_cast<size_t>(j) * kRows + r] = rows[r][j];
  }
  const __m256i half = _mm256_set1_epi32(1 << (kResamplePrecisionBits - 1));
  for (int x = 0; x < out_width; ++x) {
    const int32_t* k = weights + static_cast<size_t>(x) * taps;
    const int32_t* v = lanes + static_cast<size_t>(first[x] - span_begin) * kChannels * kRows;
    __m256i acc0 = half;
    __m256i acc1 = half;
    __m256i acc2 = half;
    for (int t = 0; t < taps; ++t) {
      const __m256i w = _mm256_set1_epi32(k[t]);
      const int32_t* pixel = v + static_cast<size_t>(t) * kChannels * kRows;
      acc0 = _mm256_add_epi32(
          acc0, _mm256_mullo_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(pixel)), w));
      acc1 = _mm256_add_epi32(
          acc1, _mm256_mullo_epi32(
                    _mm256_loadu_si256(reinterpret_cast<const __m256i*>(pixel + kRows)), w));
      acc2 = _mm256_add_epi32(
          acc2,
          _mm256_mullo_epi32(
              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(pixel + size_t{2} * kRows)), w));
    }
    // >> 22 then saturate to 0..255: the same as Clip8.
    alignas(32) int32_t sums[kChannels][kRows];
    _mm256_store_si256(reinterpret_cast<__m256i*>(sums[0]),
                       _mm256_srai_epi32(acc0, kResamplePrecisionBits));
    _mm256_store_si256(reinterpret_cast<__m256i*>(sums[1]),
                       _mm256_srai_epi32(acc1, kResamplePrecisionBits));
    _mm256_store_si256(reinterpret_cast<__m256i*>(sums[2]),
                       _mm256_srai_epi32(acc2, kResamplePrecisionBits));
    for (int r = 0; r < kRows; ++r) {
      uint8_t* o = dst + static_cast<size_t>(r) * dst_stride + static_cast<size_t>(3) * x;
      o[0] = static_cast<uint8_t>(std::clamp(sums[0][r], 0, 255));
      o[1] = static_cast<uint8_t>(std::clamp(sums[1][r], 0, 255));
      o[2] = static_cast<uint8_t>(std::clamp(sums[2][r], 0, 255));
    }
  }
}

bool HasAvx2() {
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
}

template <int K>
__attribute__((always_inline)) inline void HorizontalFixed(int runtime_taps, const uint8_t* src,
                                                           size_t src_stride, int rows,
                                                           int out_width, const int32_t* first,
                                                           const int32_t* weights, uint8_t* dst,
                                                           size_t dst_stride) {
  const int taps = K > 0 ? K : runtime_taps;  // K = 0: any number, known at run time
  const int span_begin = first[0];
  int span_end = span_begin;
  for (int x = 0; x < out_width; ++x) span_end = std::max(span_end, first[x] + taps);
  int y = 0;
  if (HasAvx2() && rows >= 8) {
    std::vector<int32_t> lanes(static_cast<size_t>(span_end - span_begin) * kChannels * 8);
    for (; y + 8 <= rows; y += 8) {
      HorizontalEightRowsAvx2<K>(taps, src + static_cast<size_t>(y) * src_stride, src_stride,
                                 span_begin, span_end, out_width, first, weights, lanes.data(),
                                 dst + static_cast<size_t>(y) * dst_stride, dst_stride);
    }
  }
  for (; y < rows; y += 2) {
    const int y1 = y + 1 < rows ? y + 1 : y;  // an odd last row is done twice
    HorizontalRows<K>(taps, src + static_cast<size_t>(y) * src_stride,
                      src + static_cast<size_t>(y1) * src_stride, out_width, first, weights,
                      dst + static_cast<size_t>(y) * dst_stride,
                      dst + static_cast<size_t>(y1) * dst_stride);
  }
}

void HorizontalPass(const uint8_t* src, size_t src_stride, int in_width, int rows,
                    const ResampleAxis& axis, uint8_t* dst, size_t dst_stride) {
  const int out_width = static_cast<int>(axis.first.size());
  const int taps = axis.max_taps;
  if (taps <= in_width) {
    // Pad each output to exactly `taps` weights, its window kept inside the row.
    std::vector<int32_t> first(out_width);
    std::vector<int32_t> weights(static_cast<size_t>(out_width) * taps, 0);
    for (int x = 0; x < out_width; ++x) {
      const int start = std::min(axis.first[x], in_width - taps);
      const int shift = axis.first[x] - start;
      first[x] = start;
      for (int t = 0; t < axis.taps[x]; ++t) {
        weights[static_cast<size_t>(x) * taps + shift + t] =
            axis.weights[static_cast<size_t>(x) * taps + t];
      }
    }
    switch (taps) {
#define BRIGADE_RESIZE_CASE(k)                                                                    \
  case k:                                                                                         \
    HorizontalFixed<k>(taps, src, src_stride, rows, out_width, first.data(), weights.data(), dst, \
                       dst_stride);                                                               \
    return;
      BRIGADE_RESIZE_CASE(3)
      BRIGADE_RESIZE_CASE(5)
      BRIGADE_RESIZE_CASE(7)
      BRIGADE_RESIZE_CASE(9)
      BRIGADE_RESIZE_CASE(11)
      BRIGADE_RESIZE_CASE(13)
      BRIGADE_RESIZE_CASE(15)
      BRIGADE_RESIZE_CASE(17)
#undef BRIGADE_RESIZE_CASE
      default:
        HorizontalFixed<0>(taps, src, src_stride, rows, out_width, first.data(), weights.data(),
                           dst, dst_stride);
        return;
    }
  }
  const int32_t* first = axis.first.data();
  for (int y = 0; y < rows; ++y) {
    const uint8_t* in = src + static_cast<size_t>(y) * src_stride;
    uint8_t* out = dst + static_cast<size_t>(y) * dst_stride;
    for (int x = 0; x < out_width; ++x) {
      const int32_t* k = axis.weights.data() + static_cast<size_t>(x) * taps;
      const uint8_t* p = in + static_cast<size_t>(first[x]) * kChannels;
      int32_t s0 = 1 << (kResamplePrecisionBits - 1);
      int32_t s1 = s0;
      int32_t s2 = s0;
      for (int t = 0; t < axis.taps[x]; ++t) {
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
// Compiled twice, for AVX2 and the baseline, and picked at run time like the horizontal pass:
// an explicit dispatch, not target_clones, whose ifunc resolver runs before a sanitizer runtime
// is up (ThreadSanitizer builds crashed at load).
__attribute__((always_inline)) inline void VerticalPassBody(const uint8_t* src, size_t src_stride,
                                                            int row0, const ResampleAxis& axis,
                                                            size_t row_bytes, int32_t* acc,
                                                            uint8_t* dst, size_t dst_stride) {
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

__attribute__((target("avx2"))) void VerticalPassAvx2(const uint8_t* src, size_t src_stride,
                                                      int row0, const ResampleAxis& axis,
                                                      size_t row_bytes, int32_t* acc, uint8_t* dst,
                                                      size_t dst_stride) {
  VerticalPassBody(src, src_stride, row0, axis, row_bytes, acc, dst, dst_stride);
}

void VerticalPass(const uint8_t* src, size_t src_stride, int row0, const ResampleAxis& axis,
                  size_t row_bytes, int32_t* acc, uint8_t* dst, size_t dst_stride) {
  if (HasAvx2()) {
    VerticalPassAvx2(src, src_stride, row0, axis, row_bytes, acc, dst, dst_stride);
  } else {
    VerticalPassBody(src, src_stride, row0, axis, row_bytes, acc, dst, dst_stride);
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
    // Pillow truncates x + 0.5 (toward zero), which lround would not reproduce.
    int xmin = static_cast<int>(center - support + 0.5);  // NOLINT(bugprone-incorrect-roundings)
    if (xmin < 0) xmin = 0;
    int xmax = static_cast<int>(center + support + 0.5);  // NOLINT(bugprone-incorrect-roundings)
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
      fixed[x] = ToFixedPoint(normalized);
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
    HorizontalPass(source.row(row0), source.stride_bytes, source.width, row_end - row0, h_axis,
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
