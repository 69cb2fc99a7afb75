// Resize against a straightforward reference written from the ONNX operator's definition (one
// output element at a time, in double): nearest with every nearest_mode, linear with every
// coordinate_transformation_mode, cubic with and without exclude_outside, up- and downsampling;
// on plain inputs, on the nChw16c layout a convolution leaves, and on more than one thread.

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "engine/onnx/test_util/graph_runner.h"
#include "gtest/gtest.h"

namespace brigade::engine::onnx {
namespace {

struct Mode {
  std::string mode = "nearest";
  std::string transform = "half_pixel";
  std::string nearest = "round_prefer_floor";
  float cubic_a = -0.75f;
  bool exclude_outside = false;
  float extrapolation = 0;
  std::vector<float> roi;  // tf_crop_and_resize: starts then ends, one per dimension
};

std::string Describe(const Mode& m) {
  return m.mode + "/" + m.transform + "/" + m.nearest + (m.exclude_outside ? "/exclude" : "");
}

// The source coordinate of output index x along one dimension (ONNX's formulas).
double SourceCoordinate(const Mode& m, int64_t x, int64_t in, int64_t out, double roi_start,
                        double roi_end) {
  const double scale = static_cast<double>(out) / static_cast<double>(in);
  if (m.transform == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (m.transform == "pytorch_half_pixel") return out > 1 ? (x + 0.5) / scale - 0.5 : 0;
  if (m.transform == "align_corners") {
    return out == 1 ? 0 : static_cast<double>(x) * (in - 1) / static_cast<double>(out - 1);
  }
  if (m.transform == "asymmetric") return x / scale;
  if (m.transform == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  // tf_crop_and_resize
  return out > 1 ? roi_start * (in - 1) + x * (roi_end - roi_start) * (in - 1) / (out - 1)
                 : 0.5 * (roi_start + roi_end) * (in - 1);
}

// (index, weight) pairs of one output index along one dimension; empty when outside.
std::vector<std::pair<int64_t, double>> ReferenceTaps(const Mode& m, int64_t x, int64_t in,
                                                      int64_t out, double roi_start,
                                                      double roi_end) {
  const double c = SourceCoordinate(m, x, in, out, roi_start, roi_end);
  if (m.transform == "tf_crop_and_resize" && (c < 0 || c > in - 1)) return {};
  auto edge = [in](int64_t i) { return std::clamp<int64_t>(i, 0, in - 1); };
  if (m.mode == "nearest") {
    double r = 0;
    if (m.nearest == "floor") {
      r = std::floor(c);
    } else if (m.nearest == "ceil") {
      r = std::ceil(c);
    } else if (c - std::floor(c) == 0.5) {
      r = m.nearest == "round_prefer_ceil" ? std::ceil(c) : std::floor(c);
    } else {
      r = std::round(c);
    }
    return {{edge(static_cast<int64_t>(r)), 1.0}};
  }
  if (m.mode == "linear") {
    const double cc = std::clamp<double>(c, 0, static_cast<double>(in - 1));
    const auto x0 = static_cast<int64_t>(std::floor(cc));
    const double w = cc - static_cast<double>(x0);
    return {{edge(x0), 1 - w}, {edge(x0 + 1), w}};
  }
  // cubic: Keys' kernel with coefficient a over the four neighbours.
  const auto x0 = static_cast<int64_t>(std::floor(c));
  const double t = c - static_cast<double>(x0);
  const double a = m.cubic_a;
  auto kernel = [a](double d) {
    d = std::abs(d);
    if (d <= 1) return ((a + 2) * d - (a + 3)) * d * d + 1;
    if (d < 2) return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
    return 0.0;
  };
  std::vector<std::pair<int64_t, double>> taps;
  double sum = 0;
  for (int64_t j = -1; j <= 2; ++j) {
    const int64_t i = x0 + j;
    const double w = m.exclude_outside && (i < 0 || i >= in) ? 0 : kernel(t - j);
    taps.emplace_back(edge(i), w);
    sum += w;
  }
  if (m.exclude_outside) {
    for (auto& tap : taps) tap.second /= sum;
  }
  return taps;
}

// Resizes `x` (4-D) to `out` with taps per dimension; the coordinate transform applies to every
// dimension, so tf_half_pixel_for_nn moves even the ones whose size stays.
Tensor ReferenceResize(const Mode& m, const Tensor& x, const Shape& out) {
  const Shape& s = x.shape();
  std::vector<std::vector<std::vector<std::pair<int64_t, double>>>> taps(4);
  for (size_t d = 0; d < 4; ++d) {
    const double start = m.roi.empty() ? 0 : m.roi[d];
    const double end = m.roi.empty() ? 1 : m.roi[d + 4];
    for (int64_t o = 0; o < out[d]; ++o) {
      taps[d].push_back(ReferenceTaps(m, o, s[d], out[d], start, end));
    }
  }
  std::vector<float> values;
  const auto in = x.values<float>();
  for (int64_t n = 0; n < out[0]; ++n) {
    for (int64_t c = 0; c < out[1]; ++c) {
      for (int64_t y = 0; y < out[2]; ++y) {
        for (int64_t w = 0; w < out[3]; ++w) {
          const auto& tn = taps[0][n];
          const auto& tc = taps[1][c];
          const auto& ty = taps[2][y];
          const auto& tw = taps[3][w];
          if (tn.empty() || tc.empty() || ty.empty() || tw.empty()) {
            values.push_back(m.extrapolation);
            continue;
          }
          double v = 0;
          for (const auto& [in_n, wn] : tn) {
            for (const auto& [in_c, wc] : tc) {
              for (const auto& [in_y, wy] : ty) {
                for (const auto& [in_w, ww] : tw) {
                  const int64_t i = ((in_n * s[1] + in_c) * s[2] + in_y) * s[3] + in_w;
                  v += wn * wc * wy * ww * in[static_cast<size_t>(i)];
                }
              }
            }
          }
          values.push_back(static_cast<float>(v));
        }
      }
    }
  }
  return *Tensor::FromValues<float>(out, values);
}

// Adds Resize(input) -> "y" with `sizes` to `b` (opset 13 inputs: X, roi, scales, sizes).
void AddResize(OnnxBuilder& b, const std::string& input, const Mode& m,
               std::vector<int64_t> sizes) {
  b.Initializer("sizes", *Tensor::FromValues<int64_t>(Shape{4}, sizes));
  std::string roi;
  if (!m.roi.empty()) {
    b.Initializer("roi", *Tensor::FromValues<float>(Shape{8}, m.roi));
    roi = "roi";
  }
  auto& node = b.Node("Resize", {input, roi, "", "sizes"}, {"y"});
  OnnxBuilder::SetString(node, "mode", m.mode);
  OnnxBuilder::SetString(node, "coordinate_transformation_mode", m.transform);
  OnnxBuilder::SetString(node, "nearest_mode", m.nearest);
  OnnxBuilder::SetFloat(node, "cubic_coeff_a", m.cubic_a);
  OnnxBuilder::SetInt(node, "exclude_outside", m.exclude_outside ? 1 : 0);
  OnnxBuilder::SetFloat(node, "extrapolation_value", m.extrapolation);
  b.Output("y", DataType::kFp32, sizes);
}

// Runs Resize on a plain [2, 3, 5, 7] input for each target size and compares with the reference.
void ExpectMatchesReference(const Mode& m, int threads = 1) {
  const Tensor x = RandomTensor({2, 3, 5, 7}, 11);
  for (auto [h, w] : {std::pair<int64_t, int64_t>{10, 14}, {9, 4}, {3, 11}, {1, 1}, {5, 7}}) {
    OnnxBuilder b;
    b.Input("x", DataType::kFp32, {2, 3, 5, 7});
    AddResize(b, "x", m, {2, 3, h, w});
    const std::vector<Tensor> got = RunGraph(LoadGraph(b), {&x, 1}, threads);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_LT(MaxAbsDiff(got[0], ReferenceResize(m, x, {2, 3, h, w})), 1e-5f)
        << Describe(m) << " to " << h << "x" << w;
  }
}

const char* const kTransforms[] = {"half_pixel", "pytorch_half_pixel", "align_corners",
                                   "asymmetric", "tf_half_pixel_for_nn"};

TEST(ResizeKernelTest, NearestMatchesTheReferenceForEveryNearestAndCoordinateMode) {
  for (const char* nearest : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}) {
    for (const char* transform : kTransforms) {
      Mode m;
      m.nearest = nearest;
      m.transform = transform;
      ExpectMatchesReference(m);
    }
  }
}

TEST(ResizeKernelTest, LinearMatchesTheReferenceForEveryCoordinateMode) {
  for (const char* transform : kTransforms) {
    Mode m;
    m.mode = "linear";
    m.transform = transform;
    ExpectMatchesReference(m);
  }
}

TEST(ResizeKernelTest, CubicMatchesTheReferenceWithAndWithoutExcludeOutside) {
  for (bool exclude : {false, true}) {
    for (const char* transform : {"half_pixel", "align_corners", "asymmetric"}) {
      Mode m;
      m.mode = "cubic";
      m.transform = transform;
      m.exclude_outside = exclude;
      m.cubic_a = exclude ? -0.5f : -0.75f;
      ExpectMatchesReference(m);
    }
  }
}

TEST(ResizeKernelTest, TfCropAndResizeExtrapolatesOutsideTheRoi) {
  for (const char* mode : {"nearest", "linear", "cubic"}) {
    Mode m;
    m.mode = mode;
    m.transform = "tf_crop_and_resize";
    m.extrapolation = 7.5f;
    m.roi = {0, 0, -0.2f, 0.1f, 1, 1, 0.9f, 1.3f};
    ExpectMatchesReference(m);
  }
}

TEST(ResizeKernelTest, TwoThreadsComputeWhatTheReferenceDoes) {
  // Large enough (8 × 80 × 80 outputs) that the rows are split between the threads.
  const Tensor x = RandomTensor({1, 8, 40, 40}, 15);
  for (const char* mode : {"nearest", "linear", "cubic"}) {
    Mode m;
    m.mode = mode;
    OnnxBuilder b;
    b.Input("x", DataType::kFp32, {1, 8, 40, 40});
    AddResize(b, "x", m, {1, 8, 80, 80});
    const Tensor got = RunGraph(LoadGraph(b), {&x, 1}, 2)[0];
    EXPECT_LT(MaxAbsDiff(got, ReferenceResize(m, x, {1, 8, 80, 80})), 1e-5f) << mode;
  }
}

// A 16-channel convolution writes nChw16c, which Resize reads and writes without a reorder: the
// graph conv → resize must equal the reference applied to the convolution's plain output.
TEST(ResizeKernelTest, ResizeOfABlockedConvolutionOutputMatchesTheReference) {
  const Tensor x = RandomTensor({1, 3, 6, 5}, 12);
  const Tensor w = RandomTensor({20, 3, 1, 1}, 13);  // 20 channels: the second block is padded
  OnnxBuilder plain;
  plain.Input("x", DataType::kFp32, {1, 3, 6, 5});
  plain.Initializer("w", w);
  plain.Node("Conv", {"x", "w"}, {"c"});
  plain.Output("c", DataType::kFp32, {1, 20, 6, 5});
  const Tensor conv = RunGraph(LoadGraph(plain), {&x, 1})[0];
  for (const char* mode : {"nearest", "linear", "cubic"}) {
    Mode m;
    m.mode = mode;
    m.transform = "asymmetric";
    m.nearest = "floor";
    for (auto [h, w_out] : {std::pair<int64_t, int64_t>{12, 10}, {3, 9}}) {
      OnnxBuilder b;
      b.Input("x", DataType::kFp32, {1, 3, 6, 5});
      b.Initializer("w", w);
      b.Node("Conv", {"x", "w"}, {"c"});
      AddResize(b, "c", m, {1, 20, h, w_out});
      for (int threads : {1, 2}) {
        const Tensor got = RunGraph(LoadGraph(b), {&x, 1}, threads)[0];
        EXPECT_LT(MaxAbsDiff(got, ReferenceResize(m, conv, {1, 20, h, w_out})), 1e-5f)
            << mode << " to " << h << "x" << w_out << " on " << threads << " threads";
      }
    }
  }
}

// Integer tensors and resizes of the channel dimension take the generic loop; still right.
TEST(ResizeKernelTest, ResizingTheChannelDimensionMatchesTheReferencePerDimension) {
  const Tensor x = RandomTensor({1, 2, 3, 4}, 14);
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {1, 2, 3, 4});
  Mode m;
  m.mode = "nearest";
  m.transform = "asymmetric";
  m.nearest = "floor";
  AddResize(b, "x", m, {1, 4, 3, 4});
  const Tensor got = RunGraph(LoadGraph(b), {&x, 1})[0];
  ASSERT_EQ(got.shape(), (Shape{1, 4, 3, 4}));
  const auto in = x.values<float>();
  const auto out = got.values<float>();
  for (size_t c = 0; c < 4; ++c) {
    for (size_t i = 0; i < 12; ++i) EXPECT_EQ(out[c * 12 + i], in[(c / 2) * 12 + i]);
  }
}

}  // namespace
}  // namespace brigade::engine::onnx
