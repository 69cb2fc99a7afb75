// Resize (opsets 10–18 semantics up to opset 17 attributes) and Upsample (opsets 7–9).
//
// Separable interpolation: for every output index along every dimension, the planner-time
// factory computes the input taps (index, weight) — one for nearest, two for linear, four for
// cubic — following ONNX's coordinate transformations; Run() sums the tap products per output
// element. Dimensions with scale 1 have a single identity tap, so NCHW resizes cost only their
// spatial taps.

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "core/status_macros.h"
#include "core/tensor.h"
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
