// Resize (opsets 10–18 semantics up to opset 17 attributes) and Upsample (opsets 7–9).
//
// Separable interpolation: for every output index along every dimension, the planner-time
// factory computes the input taps (index, weight) — one for nearest, two for linear, four for
// cubic — following ONNX's coordinate transformations.
//
// fp32 resizes of the last two dimensions (every image model's Resize) run PlanarResizeKernel:
// per output row, the (at most four) source rows it reads are first interpolated along W into a
// small per-thread cache of rows — upsampling reuses each one for several output rows — and the
// output row is their weighted sum, a contiguous loop the compiler vectorizes; the loops are
// compiled for AVX-512, AVX2 and the baseline and picked at run time. The same loops run on
// oneDNN's nChw8c / nChw16c layouts (a "pixel" is then 8 or 16 channels), so a Resize between
// convolutions needs no reorder. Everything else (other types, resized batch or channel
// dimensions, 3-D resizes) sums the tap products per element in double (ResizeKernel).

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "core/status_macros.h"
#include "core/tensor.h"
#include "engine/onnx/kernels/cpu_isa.h"
#include "engine/onnx/kernels/dnnl_util.h"
#include "engine/onnx/kernels/kernel_util.h"
#include "engine/onnx/kernels/registry.h"

namespace brigade::engine::onnx {
namespace {

struct Tap {
  int64_t index;
  float weight;
};

// Taps of one output index along one dim; `outside` marks tf_crop_and_resize extrapolation.
struct Taps {
  absl::InlinedVector<Tap, 4> taps;  // at most four (cubic): one allocation per table, not index
  bool outside = false;
};

class ResizeKernel final : public OpKernel {
 public:
  ResizeKernel(DataType dtype, Shape in, Shape out, std::vector<std::vector<Taps>> taps,
               float extrapolation)
      : dtype_(dtype),
        in_(std::move(in)),
        out_(std::move(out)),
        taps_(std::move(taps)),
        extrapolation_(extrapolation) {}

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
    const size_t rank = out_.size();
    const Shape strides = Strides(in_);
    const int64_t total = DimProduct(out_, 0, rank);
    ParallelFor(ctx.threads, total, 256, [&](int64_t b, int64_t e) {
      absl::InlinedVector<const Taps*, 6> sel(rank);
      absl::InlinedVector<size_t, 6> k(rank);
      for (int64_t o = b; o < e; ++o) {
        int64_t rest = o;
        bool outside = false;
        for (size_t d = rank; d-- > 0;) {
          sel[d] = &taps_[d][static_cast<size_t>(rest % out_[d])];
          rest /= out_[d];
          outside = outside || sel[d]->outside;
        }
        if (outside) {
          out[o] = static_cast<T>(extrapolation_);
          continue;
        }
        double sum = 0;
        std::fill(k.begin(), k.end(), 0);
        while (true) {
          double w = 1;
          int64_t offset = 0;
          for (size_t d = 0; d < rank; ++d) {
            const Tap& t = sel[d]->taps[k[d]];
            w *= t.weight;
            offset += t.index * strides[d];
          }
          sum += w * static_cast<double>(in[offset]);
          size_t d = rank;
          while (d-- > 0) {
            if (++k[d] < sel[d]->taps.size()) break;
            k[d] = 0;
          }
          if (d == static_cast<size_t>(-1)) break;
        }
        if constexpr (std::is_integral_v<T>) {
          out[o] = static_cast<T>(std::nearbyint(sum));
        } else {
          out[o] = static_cast<T>(sum);
        }
      }
    });
  }

  const DataType dtype_;
  const Shape in_, out_;
  const std::vector<std::vector<Taps>> taps_;
  const float extrapolation_;
};

// --- The fp32 planar path -------------------------------------------------------------------

// One axis's taps as flat tables, `taps` per output index (padded with zero weights on the last
// index, so every output has the same count), and the outputs tf_crop_and_resize puts outside.
struct AxisTable {
  int taps = 1;
  std::vector<int32_t> index;
  std::vector<float> weight;
  std::vector<int32_t> outside;  // output indices that take the extrapolation value
};

// nullopt when some output's taps span more than four source indices (the row cache's size);
// ONNX's taps are consecutive (clamped at the edges), so this does not happen.
std::optional<AxisTable> MakeAxisTable(const std::vector<Taps>& all) {
  AxisTable t;
  for (const Taps& x : all) t.taps = std::max<int>(t.taps, static_cast<int>(x.taps.size()));
  if (t.taps == 3) t.taps = 4;
  if (t.taps > 4) return std::nullopt;
  for (size_t o = 0; o < all.size(); ++o) {
    const Taps& x = all[o];
    if (x.outside) t.outside.push_back(static_cast<int32_t>(o));
    int64_t lo = x.taps.empty() ? 0 : x.taps[0].index;
    int64_t hi = lo;
    for (int k = 0; k < t.taps; ++k) {
      const bool real = static_cast<size_t>(k) < x.taps.size();
      const int64_t i = real ? x.taps[k].index : (x.taps.empty() ? 0 : x.taps.back().index);
      lo = std::min(lo, i);
      hi = std::max(hi, i);
      t.index.push_back(static_cast<int32_t>(i));
      t.weight.push_back(real ? x.taps[k].weight : 0.0f);
    }
    if (hi - lo >= 4) return std::nullopt;
  }
  return t;
}

// What one run of the planar loops needs. A "pixel" is `block` floats (1 plain, 8 or 16 on a
// blocked layout); a row is `width` pixels; a plane `height` rows.
struct PlanarShape {
  int64_t planes = 0;
  int64_t in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  int block = 1;
};

constexpr int kCachedRows = 4;  // source rows kept interpolated along W, per thread

// Interpolates source row `src` along W into `dst` (out_w pixels).
template <int B, int K>
__attribute__((always_inline)) inline void HorizontalRow(const float* src, const AxisTable& cols,
                                                         int64_t out_w, float* dst) {
  const int32_t* index = cols.index.data();
  const float* weight = cols.weight.data();
  for (int64_t x = 0; x < out_w; ++x) {
    float* d = dst + x * B;
    if constexpr (K == 1) {
      const float* s = src + static_cast<int64_t>(index[x]) * B;
      for (int j = 0; j < B; ++j) d[j] = s[j];
    } else {
      float acc[B];
      const float* s0 = src + static_cast<int64_t>(index[x * K]) * B;
      const float w0 = weight[x * K];
      for (int j = 0; j < B; ++j) acc[j] = w0 * s0[j];
      for (int k = 1; k < K; ++k) {
        const float* s = src + static_cast<int64_t>(index[x * K + k]) * B;
        const float w = weight[x * K + k];
        for (int j = 0; j < B; ++j) acc[j] += w * s[j];
      }
      for (int j = 0; j < B; ++j) d[j] = acc[j];
    }
  }
}

template <int B>
__attribute__((always_inline)) inline void HorizontalAny(const float* src, const AxisTable& cols,
                                                         int64_t out_w, float* dst) {
  switch (cols.taps) {
    case 1:
      return HorizontalRow<B, 1>(src, cols, out_w, dst);
    case 2:
      return HorizontalRow<B, 2>(src, cols, out_w, dst);
    default:
      return HorizontalRow<B, 4>(src, cols, out_w, dst);
  }
}

// Output rows [row_begin, row_end) of all planes (row r: plane r / out_h, row r % out_h).
// `cache` holds kCachedRows rows of out_w pixels.
__attribute__((always_inline)) inline void PlanarRowsBody(const PlanarShape& g,
                                                          const AxisTable& rows,
                                                          const AxisTable& cols, const float* in,
                                                          float* out, int64_t row_begin,
                                                          int64_t row_end, float* cache) {
  const int64_t row_len = g.out_w * g.block;
  int64_t cached[kCachedRows];
  for (int64_t& c : cached) c = -1;
  auto horizontal = [&](const float* src, float* dst) {
    switch (g.block) {
      case 16:
        return HorizontalAny<16>(src, cols, g.out_w, dst);
      case 8:
        return HorizontalAny<8>(src, cols, g.out_w, dst);
      default:
        return HorizontalAny<1>(src, cols, g.out_w, dst);
    }
  };
  int64_t previous_source = -1;  // nearest: the source row the previous output row copied
  for (int64_t r = row_begin; r < row_end; ++r) {
    const int64_t plane = r / g.out_h;
    const int64_t y = r % g.out_h;
    float* dst = out + r * row_len;
    const int32_t* iy = rows.index.data() + y * rows.taps;
    const float* wy = rows.weight.data() + y * rows.taps;
    const float* plane_in = in + plane * g.in_h * g.in_w * g.block;
    if (rows.taps == 1) {
      const int64_t source = plane * g.in_h + iy[0];
      if (source == previous_source) {
        std::copy(dst - row_len, dst, dst);
      } else {
        horizontal(plane_in + static_cast<int64_t>(iy[0]) * g.in_w * g.block, dst);
      }
      previous_source = source;
      continue;
    }
    const float* src[kCachedRows];
    for (int k = 0; k < rows.taps; ++k) {
      const int64_t key = plane * g.in_h + iy[k];
      const int slot = static_cast<int>(iy[k] & (kCachedRows - 1));
      float* line = cache + slot * row_len;
      if (cached[slot] != key) {
        horizontal(plane_in + static_cast<int64_t>(iy[k]) * g.in_w * g.block, line);
        cached[slot] = key;
      }
      src[k] = line;
    }
    if (rows.taps == 2) {
      const float w0 = wy[0], w1 = wy[1];
      const float* a = src[0];
      const float* b = src[1];
      for (int64_t i = 0; i < row_len; ++i) dst[i] = w0 * a[i] + w1 * b[i];
    } else {
      const float w0 = wy[0], w1 = wy[1], w2 = wy[2], w3 = wy[3];
      const float* a = src[0];
      const float* b = src[1];
      const float* c = src[2];
      const float* d = src[3];
      for (int64_t i = 0; i < row_len; ++i) dst[i] = w0 * a[i] + w1 * b[i] + w2 * c[i] + w3 * d[i];
    }
  }
}

__attribute__((target("avx512f,avx512vl,avx2,fma"))) void PlanarRowsAvx512(
    const PlanarShape& g, const AxisTable& rows, const AxisTable& cols, const float* in, float* out,
    int64_t row_begin, int64_t row_end, float* cache) {
  PlanarRowsBody(g, rows, cols, in, out, row_begin, row_end, cache);
}

__attribute__((target("avx2,fma"))) void PlanarRowsAvx2(const PlanarShape& g, const AxisTable& rows,
                                                        const AxisTable& cols, const float* in,
                                                        float* out, int64_t row_begin,
                                                        int64_t row_end, float* cache) {
  PlanarRowsBody(g, rows, cols, in, out, row_begin, row_end, cache);
}

void PlanarRowsBaseline(const PlanarShape& g, const AxisTable& rows, const AxisTable& cols,
                        const float* in, float* out, int64_t row_begin, int64_t row_end,
                        float* cache) {
  PlanarRowsBody(g, rows, cols, in, out, row_begin, row_end, cache);
}

using PlanarRowsFn = void (*)(const PlanarShape&, const AxisTable&, const AxisTable&, const float*,
                              float*, int64_t, int64_t, float*);

PlanarRowsFn PlanarRows() {
  switch (LoopIsaForCpu()) {
    case LoopIsa::kAvx512:
      return &PlanarRowsAvx512;
    case LoopIsa::kAvx2:
      return &PlanarRowsAvx2;
    default:
      return &PlanarRowsBaseline;
  }
}

class PlanarResizeKernel final : public OpKernel {
 public:
  // `threads`: at most this many chunks run at once, each with its own row cache in scratch
  // (ScratchBytes(threads)).
  PlanarResizeKernel(PlanarShape shape, AxisTable rows, AxisTable cols, float extrapolation,
                     int threads)
      : g_(shape),
        rows_(std::move(rows)),
        cols_(std::move(cols)),
        extrapolation_(extrapolation),
        threads_(std::max(1, threads)) {}

  static size_t ScratchBytes(const PlanarShape& g, int threads) {
    return static_cast<size_t>(std::max(1, threads)) * kCachedRows *
           static_cast<size_t>(g.out_w * g.block) * sizeof(float);
  }

  absl::Status Run(const RunContext& ctx) override {
    const float* in = ctx.in<float>(0);
    float* out = ctx.out<float>(0);
    auto* cache = reinterpret_cast<float*>(ctx.scratch);
    const int64_t total_rows = g_.planes * g_.out_h;
    const int64_t row_len = g_.out_w * g_.block;
    // Chunks of at least ~16 K output floats: below that a thread costs more than it saves.
    const int64_t max_chunks = std::max<int64_t>(1, total_rows * row_len / (1 << 14));
    const int64_t chunks = std::min<int64_t>({threads_, ctx.threads, max_chunks});
    const PlanarRowsFn rows_fn = PlanarRows();
    ParallelFor(static_cast<int>(chunks), chunks, 1, [&](int64_t b, int64_t e) {
      for (int64_t c = b; c < e; ++c) {
        const int64_t begin = total_rows * c / chunks;
        const int64_t end = total_rows * (c + 1) / chunks;
        rows_fn(g_, rows_, cols_, in, out, begin, end, cache + c * kCachedRows * row_len);
      }
    });
    if (!rows_.outside.empty() || !cols_.outside.empty()) FillOutside(out);
    return absl::OkStatus();
  }

 private:
  // tf_crop_and_resize's extrapolation: rows and columns whose coordinate fell outside the input.
  void FillOutside(float* out) const {
    const int64_t row_len = g_.out_w * g_.block;
    for (int64_t p = 0; p < g_.planes; ++p) {
      for (int64_t y = 0; y < g_.out_h; ++y) {
        float* row = out + (p * g_.out_h + y) * row_len;
        for (const int64_t x : cols_.outside) {
          std::fill(row + x * g_.block, row + (x + 1) * g_.block, extrapolation_);
        }
      }
      for (int32_t y : rows_.outside) {
        float* row = out + (p * g_.out_h + y) * row_len;
        std::fill(row, row + row_len, extrapolation_);
      }
    }
  }

  const PlanarShape g_;
  const AxisTable rows_, cols_;
  const float extrapolation_;
  const int threads_;
};

// Whether every dimension but the last two keeps its size with a single identity tap.
bool OnlyLastTwoResized(const std::vector<std::vector<Taps>>& taps) {
  if (taps.size() < 2) return false;
  for (size_t d = 0; d + 2 < taps.size(); ++d) {
    for (size_t i = 0; i < taps[d].size(); ++i) {
      // Cubic keeps four taps where the coordinate is exact, three of them weighing 0.
      const Taps& t = taps[d][i];
      if (t.outside) return false;
      for (const Tap& tap : t.taps) {
        const bool identity = tap.index == static_cast<int64_t>(i) && tap.weight == 1.0f;
        if (!identity && tap.weight != 0.0f) return false;
      }
    }
  }
  return true;
}

// Resize takes a blocked input (nChw8c / nChw16c from a convolution) when the batch and channel
// dimensions provably keep their size (scales of exactly 1 or sizes equal to the input's, known at
// plan time) and no roi is given.
bool ResizeTakesBlocked(const Node& /*node*/, size_t input,
                        std::span<const ValueInfo* const> inputs) {
  if (input != 0 || inputs.empty() || inputs[0] == nullptr ||
      CanonicalChannelBlock(*inputs[0]) == 0) {
    return false;
  }
  const Shape& shape = inputs[0]->shape;
  auto known = [&](size_t i) -> const Tensor* {
    if (i >= inputs.size() || inputs[i] == nullptr || inputs[i]->constant == nullptr) {
      return nullptr;
    }
    return inputs[i]->num_elements() > 0 ? inputs[i]->constant : nullptr;
  };
  // An roi (tf_crop_and_resize) may extrapolate: the padded channels of the block must stay 0.
  if (known(1) != nullptr) return false;
  // A large upsampling (a segmentation head's last one, to the image's size) mostly feeds the
  // model's output, which is plain: reordering its small input is cheaper than its large output
  // (LRASPP's 40×40 → 320×320 over 21 channels: 0.1 ms against 2 ms). 2× steps, an FPN's, keep
  // the block for the convolutions and Adds around them.
  constexpr double kMaxBlockedGrowth = 4.0;
  const double in_pixels = static_cast<double>(shape[2]) * static_cast<double>(shape[3]);
  if (const Tensor* scales = known(2)) {
    if (scales->dtype() != DataType::kFp32 || scales->num_elements() != 4) return false;
    auto v = scales->values<float>();
    return v[0] == 1.0f && v[1] == 1.0f &&
           static_cast<double>(v[2]) * static_cast<double>(v[3]) <= kMaxBlockedGrowth;
  }
  if (const Tensor* sizes = known(3)) {
    if (sizes->dtype() != DataType::kInt64 || sizes->num_elements() != 4) return false;
    auto v = sizes->values<int64_t>();
    return v[0] == shape[0] && v[1] == shape[1] &&
           static_cast<double>(v[2]) * static_cast<double>(v[3]) <= kMaxBlockedGrowth * in_pixels;
  }
  return false;
}

struct Options {
  std::string mode = "nearest";
  std::string transform = "half_pixel";
  std::string nearest = "round_prefer_floor";
  float cubic_a = -0.75f;
  bool exclude_outside = false;
  float extrapolation = 0;
};

double CubicWeight(double x, double a) {
  x = std::abs(x);
  if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0;
}

// Taps for one dimension.
// `length` is the resized length the coordinate transform uses: the output size when sizes
// were given, in * scale (not rounded) when scales were, as ONNX's reference defines it.
absl::StatusOr<std::vector<Taps>> DimTaps(const KernelContext& ctx, const Options& opt, int64_t in,
                                          int64_t out, double scale, double length,
                                          double roi_start, double roi_end) {
  std::vector<Taps> all(static_cast<size_t>(out));
  for (int64_t x = 0; x < out; ++x) {
    double xo = 0;
    const std::string& t = opt.transform;
    if (t == "half_pixel") {
      xo = (x + 0.5) / scale - 0.5;
    } else if (t == "pytorch_half_pixel") {
      xo = out > 1 ? (x + 0.5) / scale - 0.5 : 0;
    } else if (t == "align_corners") {
      xo = length <= 1 ? 0 : x * static_cast<double>(in - 1) / (length - 1);
    } else if (t == "asymmetric") {
      xo = x / scale;
    } else if (t == "tf_half_pixel_for_nn") {
      xo = (x + 0.5) / scale;
    } else if (t == "tf_crop_and_resize") {
      xo = out > 1 ? roi_start * (in - 1) + x * (roi_end - roi_start) * (in - 1) / (out - 1)
                   : 0.5 * (roi_start + roi_end) * (in - 1);
      if (xo < 0 || xo > in - 1) all[static_cast<size_t>(x)].outside = true;
    } else {
      return ctx.Error("unknown coordinate_transformation_mode '", t, "'");
    }
    // A far-out coordinate (tf_crop_and_resize's roi is the model's value) selects the edge
    // whatever its size; bounded so that converting it to an index stays defined.
    xo = std::clamp<double>(xo, -4.0 - static_cast<double>(in), 2.0 * static_cast<double>(in) + 4);
    Taps& taps = all[static_cast<size_t>(x)];
    auto clamp = [in](int64_t i) { return std::clamp<int64_t>(i, 0, in - 1); };
    if (opt.mode == "nearest") {
      int64_t i = 0;
      if (opt.nearest == "round_prefer_floor") {
        i = xo == std::floor(xo) + 0.5 ? static_cast<int64_t>(std::floor(xo))
                                       : static_cast<int64_t>(std::round(xo));
      } else if (opt.nearest == "round_prefer_ceil") {
        i = static_cast<int64_t>(std::round(xo));
      } else if (opt.nearest == "floor") {
        i = static_cast<int64_t>(std::floor(xo));
      } else if (opt.nearest == "ceil") {
        i = static_cast<int64_t>(std::ceil(xo));
      } else {
        return ctx.Error("unknown nearest_mode '", opt.nearest, "'");
      }
      taps.taps.push_back({clamp(i), 1.0f});
    } else if (opt.mode == "linear") {
      const double xc = std::clamp<double>(xo, 0, static_cast<double>(in - 1));
      const auto x0 = static_cast<int64_t>(std::floor(xc));
      const double w = xc - static_cast<double>(x0);
      taps.taps.push_back({clamp(x0), static_cast<float>(1 - w)});
      if (w != 0) taps.taps.push_back({clamp(x0 + 1), static_cast<float>(w)});
    } else if (opt.mode == "cubic") {
      const auto x0 = static_cast<int64_t>(std::floor(xo));
      const double frac = xo - static_cast<double>(x0);
      double total = 0;
      std::vector<std::pair<int64_t, double>> raw;
      for (int64_t j = -1; j <= 2; ++j) {
        const int64_t i = x0 + j;
        double w = CubicWeight(static_cast<double>(j) - frac, opt.cubic_a);
        if (opt.exclude_outside && (i < 0 || i >= in)) w = 0;
        raw.emplace_back(clamp(i), w);
        total += w;
      }
      for (const auto& [i, w] : raw) {
        const double weight = opt.exclude_outside && total != 0 ? w / total : w;
        taps.taps.push_back({i, static_cast<float>(weight)});
      }
    } else {
      return ctx.Error("unknown mode '", opt.mode, "'");
    }
  }
  return all;
}

absl::StatusOr<std::unique_ptr<OpKernel>> CreateResize(KernelContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  const size_t rank = x.shape.size();
  if (x.dtype == DataType::kBool || !VisitNumeric(x.dtype, []<typename T>() {})) {
    return ctx.Unsupported("element type ", DataTypeName(x.dtype));
  }
  const AttributeMap& attrs = ctx.node->attributes;
  const bool upsample = ctx.node->op_type == "Upsample";
  Options opt;
  opt.mode = attrs.GetString("mode", "nearest");
  if (upsample || ctx.node->opset < 11) {
    opt.transform = "asymmetric";
    opt.nearest = ctx.node->opset < 11 ? "floor" : opt.nearest;
    if (opt.mode == "bilinear" || opt.mode == "trilinear") opt.mode = "linear";
  } else {
    opt.transform = attrs.GetString("coordinate_transformation_mode", "half_pixel");
    opt.nearest = attrs.GetString("nearest_mode", "round_prefer_floor");
  }
  opt.cubic_a = attrs.GetFloat("cubic_coeff_a", -0.75f);
  opt.exclude_outside = attrs.GetInt("exclude_outside", 0) != 0;
  opt.extrapolation = attrs.GetFloat("extrapolation_value", 0.0f);

  // Which inputs hold roi / scales / sizes depends on the version.
  std::vector<float> scales, roi;
  std::vector<int64_t> sizes;
  const size_t scales_input = upsample || ctx.node->opset < 11 ? 1 : 2;
  if (upsample && !attrs.GetFloats("scales").empty()) {
    scales.assign(attrs.GetFloats("scales").begin(), attrs.GetFloats("scales").end());
  } else if (ctx.has_input(scales_input) && ctx.input(scales_input).num_elements() > 0) {
    BRIGADE_ASSIGN_OR_RETURN(scales, ConstantFloats(ctx, scales_input));
  }
  if (!upsample && ctx.node->opset >= 11) {
    if (ctx.has_input(3) && ctx.input(3).num_elements() > 0) {
      BRIGADE_ASSIGN_OR_RETURN(sizes, ConstantInts(ctx, 3));
    }
    if (ctx.has_input(1) && ctx.input(1).num_elements() > 0) {
      BRIGADE_ASSIGN_OR_RETURN(roi, ConstantFloats(ctx, 1));
    }
  }
  if (scales.empty() == sizes.empty()) return ctx.Error("exactly one of scales and sizes needed");
  if ((!scales.empty() && scales.size() != rank) || (!sizes.empty() && sizes.size() != rank)) {
    return ctx.Error("scales/sizes need one entry per dimension");
  }
  // The output's size comes from the model or the request: bounded before the per-index tables
  // (one entry per output index of each dimension) are built. 2^20 is far past any image side.
  constexpr int64_t kMaxResizedDim = int64_t{1} << 20;
  Shape out;
  std::vector<double> dim_scales;
  for (size_t d = 0; d < rank; ++d) {
    const int64_t in = x.shape[d];
    if (!sizes.empty()) {
      if (sizes[d] < 0) return ctx.Error("negative output size");
      if (sizes[d] > kMaxResizedDim) return ctx.Error("sizes give an output dimension over 2^20");
      out.push_back(sizes[d]);
      dim_scales.push_back(in == 0 ? 1 : static_cast<double>(sizes[d]) / static_cast<double>(in));
    } else {
      const double scale = scales[d];
      if (!(scale > 0)) return ctx.Error("scales must be positive");
      const double o = std::floor(static_cast<double>(in) * scale);
      if (!(o <= static_cast<double>(kMaxResizedDim))) {
        return ctx.Error("scales give an output dimension over 2^20");
      }
      out.push_back(static_cast<int64_t>(o));
      dim_scales.push_back(scale);
    }
  }
  auto out_elements = ElementCount(out);
  if (!out_elements.ok() || static_cast<uint64_t>(*out_elements) >
                                kMaxTensorBytes / std::max<size_t>(1, DataTypeSize(x.dtype))) {
    return ctx.Error("output would exceed 64 GiB");
  }
  if (ctx.shape_only && x.constant == nullptr) {
    // Only the shape is asked for and nothing can be evaluated: the tables (a loop per output
    // index) would be built for nothing.
    ctx.SetOutput(0, x.dtype, out);
    return std::unique_ptr<OpKernel>();
  }
  std::vector<std::vector<Taps>> taps;
  for (size_t d = 0; d < rank; ++d) {
    const int64_t in = x.shape[d];
    const int64_t o = out[d];
    const double scale = dim_scales[d];
    const double roi_start = roi.size() == 2 * rank ? roi[d] : 0.0;
    const double roi_end = roi.size() == 2 * rank ? roi[d + rank] : 1.0;
    if (in == 0 && o > 0) return ctx.Error("cannot resize an empty dimension");
    BRIGADE_ASSIGN_OR_RETURN(
        std::vector<Taps> t,
        DimTaps(ctx, opt, in, o, scale,
                sizes.empty() ? static_cast<double>(in) * scale : static_cast<double>(o), roi_start,
                roi_end));
    taps.push_back(std::move(t));
  }
  ctx.SetOutput(0, x.dtype, out);
  const int block = CanonicalChannelBlock(x);
  if (x.layout.blocked && block == 0) return ctx.Error("blocked input reached the generic loop");
  if (x.dtype == DataType::kFp32 && OnlyLastTwoResized(taps)) {
    std::optional<AxisTable> rows = MakeAxisTable(taps[rank - 2]);
    std::optional<AxisTable> cols = MakeAxisTable(taps[rank - 1]);
    if (rows.has_value() && cols.has_value()) {
      PlanarShape g;
      g.block = block == 0 ? 1 : block;
      g.in_h = x.shape[rank - 2];
      g.in_w = x.shape[rank - 1];
      g.out_h = out[rank - 2];
      g.out_w = out[rank - 1];
      if (block != 0) {
        const dnnl_memory_desc_t& d = x.layout.desc.data;
        g.planes = x.shape[0] * (d.padded_dims[1] / block);
        ctx.outputs[0].layout =
            Layout{true, dnnl::memory::desc(ToDnnlDims(out), dnnl::memory::data_type::f32,
                                            block == 16 ? dnnl::memory::format_tag::aBcd16b
                                                        : dnnl::memory::format_tag::aBcd8b)};
      } else {
        g.planes = DimProduct(out, 0, rank - 2);
      }
      ctx.scratch_bytes = PlanarResizeKernel::ScratchBytes(g, ctx.threads);
      return std::make_unique<PlanarResizeKernel>(g, std::move(*rows), std::move(*cols),
                                                  opt.extrapolation, ctx.threads);
    }
  }
  if (x.layout.blocked) return ctx.Error("blocked input reached the generic loop");
  return std::make_unique<ResizeKernel>(x.dtype, x.shape, std::move(out), std::move(taps),
                                        opt.extrapolation);
}

}  // namespace

void RegisterResizeKernels(KernelRegistry* registry) {
  KernelDef resize;
  resize.op_type = "Resize";
  resize.create = &CreateResize;
  resize.since_version = 10;
  resize.value_inputs = Inputs({1, 2, 3});
  resize.blocked_inputs = Inputs({0});
  resize.takes_blocked = &ResizeTakesBlocked;
  registry->Add(resize);
  KernelDef upsample;
  upsample.op_type = "Upsample";
  upsample.create = &CreateResize;
  upsample.since_version = 7;
  upsample.until_version = 9;
  upsample.value_inputs = Inputs({1});
  registry->Add(upsample);
}

}  // namespace brigade::engine::onnx
