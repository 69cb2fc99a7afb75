#include "engine/onnx/passes/qdq_fusion.h"

#include <cmath>

#include "engine/onnx/kernels/qlinear_dnnl.h"
#include "engine/onnx/passes/dead_node_elimination.h"
#include "engine/onnx/passes/static_shapes.h"
#include "engine/onnx/test_util/graph_runner.h"
#include "gtest/gtest.h"

namespace brigade::engine::onnx {
namespace {

Tensor F32(std::vector<int64_t> shape, std::vector<float> v) {
  return *Tensor::FromValues<float>(Shape(shape.begin(), shape.end()), v);
}
template <typename T>
Tensor Q(std::vector<int64_t> shape, std::vector<T> v) {
  return *Tensor::FromValues<T>(Shape(shape.begin(), shape.end()), v);
}

// x → Q → DQ ─┐
// w_q → DQ ───┴─ Conv(+b) → Relu → Q → DQ → y, with per-channel weight scales; 8-bit weights,
// or 7-bit ones (|w| <= 64) as reduce_range quantization writes them.
OnnxBuilder QdqConv(int64_t group, bool seven_bit = false, bool clip = false) {
  constexpr int64_t kC = 4, kM = 4;
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {-1, kC, 6, 6});
  b.Initializer("x_s", F32({}, {0.02f}));
  b.Initializer("x_zp", Q<uint8_t>({}, {128}));
  std::vector<int8_t> w;
  w.reserve(static_cast<size_t>(kM * (kC / group) * 9));
  for (int i = 0; i < kM * (kC / group) * 9; ++i) {
    w.push_back(static_cast<int8_t>(seven_bit ? (i * 37) % 129 - 64 : (i * 37) % 255 - 127));
  }
  b.Initializer("w_q", Q<int8_t>({kM, kC / group, 3, 3}, w));
  b.Initializer("w_s", F32({kM}, {0.01f, 0.02f, 0.005f, 0.015f}));
  b.Initializer("w_zp", Q<int8_t>({kM}, {0, 0, 0, 0}));
  b.Initializer("bias", F32({kM}, {0.1f, -0.2f, 0.05f, 0.0f}));
  b.Initializer("y_s", F32({}, {0.05f}));
  b.Initializer("y_zp", Q<uint8_t>({}, {10}));
  b.Node("QuantizeLinear", {"x", "x_s", "x_zp"}, {"x_q"});
  b.Node("DequantizeLinear", {"x_q", "x_s", "x_zp"}, {"x_f"});
  OnnxBuilder::SetInt(b.Node("DequantizeLinear", {"w_q", "w_s", "w_zp"}, {"w_f"}), "axis", 0);
  auto& conv = b.Node("Conv", {"x_f", "w_f", "bias"}, {"c"});
  OnnxBuilder::SetInts(conv, "pads", {1, 1, 1, 1});
  OnnxBuilder::SetInt(conv, "group", group);
  if (clip) {
    // Active inside y's range ((255 - 10) · 0.05 = 12.25), so its bounds matter.
    b.Initializer("lo", F32({}, {0.3f}));
    b.Initializer("hi", F32({}, {1.5f}));
    b.Node("Clip", {"c", "lo", "hi"}, {"r"});
  } else {
    b.Node("Relu", {"c"}, {"r"});
  }
  b.Node("QuantizeLinear", {"r", "y_s", "y_zp"}, {"y_q"});
  b.Node("DequantizeLinear", {"y_q", "y_s", "y_zp"}, {"y"});
  b.Output("y", DataType::kFp32, {-1, kM, 6, 6});
  return b;
}

TEST(QdqFusionTest, WithoutVnniTheFloatFormStays) {
  if (DnnlInt8IsExact()) GTEST_SKIP() << "this CPU has VNNI: the pass fuses";
  Graph g = LoadGraph(QdqConv(1));
  auto changed = QdqFusion().Run(&g);
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(*changed);
  EXPECT_EQ(CountOps(g, "QLinearConv"), 0);
  EXPECT_EQ(CountOps(g, "Conv"), 1);
}

// 8-bit weights fuse with VNNI; 7-bit weights on every CPU (no int16 saturation without VNNI).
TEST(QdqFusionTest, QdqConvBecomesOneQLinearConvWithinOneQuantizationStep) {
  for (int64_t group : {1, 4}) {
    for (bool seven_bit : {false, true}) {
      if (!seven_bit && !DnnlInt8IsExact()) continue;  // no VNNI: 8-bit weights would saturate
      SCOPED_TRACE(seven_bit ? "7-bit weights" : "8-bit weights");
      const Graph original = LoadGraph(QdqConv(group, seven_bit));
      Graph g = original;
      auto changed = QdqFusion().Run(&g);
      ASSERT_TRUE(changed.ok() && *changed);
      ASSERT_TRUE(DeadNodeElimination().Run(&g).ok());
      EXPECT_EQ(CountOps(g, "QLinearConv"), 1);
      EXPECT_EQ(CountOps(g, "Conv"), 0);
      EXPECT_EQ(CountOps(g, "Relu"), 0);
      EXPECT_EQ(g.nodes().size(), 3u);  // QuantizeLinear, QLinearConv, DequantizeLinear
      Tensor x = RandomTensor({2, 4, 6, 6}, 9);
      for (float& v : x.mutable_values<float>()) v *= 2.0f;
      const auto fused = RunGraph(g, {&x, 1});
      const auto reference = RunGraph(original, {&x, 1});
      ASSERT_EQ(fused.size(), 1u);
      // Integer accumulation vs fp32 accumulation may round differently at exact .5 boundaries.
      int64_t exact = 0;
      for (int64_t i = 0; i < x.shape()[0] * 4 * 36; ++i) {
        const float d = std::abs(fused[0].values<float>()[i] - reference[0].values<float>()[i]);
        EXPECT_LE(d, 0.05f + 1e-6f) << i;
        exact += d == 0.0f;
      }
      EXPECT_GT(exact, x.shape()[0] * 4 * 36 * 95 / 100);
    }
  }
}

// oneDNN applies the post-op after its output scales: the Clip's bounds must be given in units
// of y_scale, or the clamp lands 20 times too low.
TEST(QdqFusionTest, QdqConvWithClipBecomesOneQLinearConvWithinOneQuantizationStep) {
  const Graph original = LoadGraph(QdqConv(1, /*seven_bit=*/true, /*clip=*/true));
  Graph g = original;
  auto changed = QdqFusion().Run(&g);
  ASSERT_TRUE(changed.ok() && *changed);
  ASSERT_TRUE(DeadNodeElimination().Run(&g).ok());
  EXPECT_EQ(CountOps(g, "QLinearConv"), 1);
  EXPECT_EQ(CountOps(g, "Clip"), 0);
  Tensor x = RandomTensor({2, 4, 6, 6}, 9);
  for (float& v : x.mutable_values<float>()) v *= 2.0f;
  const auto fused = RunGraph(g, {&x, 1});
  const auto reference = RunGraph(original, {&x, 1});
  ASSERT_EQ(fused.size(), 1u);
  ASSERT_EQ(reference.size(), 1u);
  int clamped = 0;
  for (int64_t i = 0; i < reference[0].num_elements(); ++i) {
    const float want = reference[0].values<float>()[i];
    clamped += want <= 0.3f + 1e-6f || want >= 1.5f - 1e-6f ? 1 : 0;
    EXPECT_NEAR(fused[0].values<float>()[i], want, 0.0501f) << i;
  }
  EXPECT_GT(clamped, 0) << "the bounds were never reached";
}

// QLinearConv → DequantizeLinear → Clip → QuantizeLinear with the convolution's own output
// parameters (a quantizer without an int8 Clip): the Clip joins the convolution, byte-exact.
OnnxBuilder QuantizedClip(bool constant_weights) {
  OnnxBuilder b;
  b.Input("x", DataType::kUint8, {1, 4, 5, 5});
  std::vector<int8_t> w;
  w.reserve(size_t{4} * 4 * 9);
  for (int i = 0; i < 4 * 4 * 9; ++i) w.push_back(static_cast<int8_t>((i * 29) % 129 - 64));
  if (constant_weights) {
    b.Initializer("w", Q<int8_t>({4, 4, 3, 3}, w));
  } else {
    b.Input("w", DataType::kInt8, {4, 4, 3, 3});
  }
  b.Initializer("x_s", F32({}, {0.03f}));
  b.Initializer("x_zp", Q<uint8_t>({}, {100}));
  b.Initializer("w_s", F32({}, {0.01f}));
  b.Initializer("w_zp", Q<int8_t>({}, {0}));
  b.Initializer("y_s", F32({}, {0.02f}));
  b.Initializer("y_zp", Q<uint8_t>({}, {50}));
  b.Initializer("lo", F32({}, {0.0f}));
  b.Initializer("hi", F32({}, {1.7f}));
  OnnxBuilder::SetInts(
      b.Node("QLinearConv", {"x", "x_s", "x_zp", "w", "w_s", "w_zp", "y_s", "y_zp"}, {"c_q"}),
      "pads", {1, 1, 1, 1});
  b.Node("DequantizeLinear", {"c_q", "y_s", "y_zp"}, {"c"});
  b.Node("Clip", {"c", "lo", "hi"}, {"r"});
  b.Node("QuantizeLinear", {"r", "y_s", "y_zp"}, {"y"});
  b.Output("y", DataType::kUint8, {1, 4, 5, 5});
  return b;
}

TEST(QdqFusionTest, ClipBetweenTheSameQuantizationJoinsTheConvolutionExactly) {
  if (!DnnlInt8IsExact()) GTEST_SKIP() << "no VNNI: these 8-bit weights stay on the integer loop";
  const Graph original = LoadGraph(QuantizedClip(true));
  Graph g = original;
  auto changed = QdqFusion().Run(&g);
  ASSERT_TRUE(changed.ok() && *changed);
  ASSERT_TRUE(DeadNodeElimination().Run(&g).ok());
  EXPECT_EQ(CountOps(g, "Clip"), 0);
  EXPECT_EQ(g.nodes().size(), 1u);
  std::vector<uint8_t> xv;
  xv.reserve(100);
  for (int i = 0; i < 100; ++i) xv.push_back(static_cast<uint8_t>((i * 53) % 256));
  const Tensor x = Q<uint8_t>({1, 4, 5, 5}, xv);
  const auto fused = RunGraph(g, {&x, 1});
  const auto reference = RunGraph(original, {&x, 1});
  ASSERT_EQ(fused.size(), 1u);
  ASSERT_EQ(reference.size(), 1u);
  int low = 0, high = 0;
  for (int64_t i = 0; i < 100; ++i) {
    const uint8_t want = reference[0].values<uint8_t>()[i];
    low += want == 50 ? 1 : 0;    // Q(0)
    high += want == 135 ? 1 : 0;  // Q(1.7) = 85 + 50
    EXPECT_EQ(fused[0].values<uint8_t>()[i], want) << i;
  }
  EXPECT_GT(low, 0);
  EXPECT_GT(high, 0);
}

TEST(QdqFusionTest, NonConstantWeightsAreLeftAlone) {
  OnnxBuilder b;
  b.Input("a", DataType::kUint8, {2, 3});
  b.Input("w_q", DataType::kInt8, {3, 4});
  b.Initializer("s", F32({}, {0.1f}));
  b.Initializer("zp", Q<uint8_t>({}, {0}));
  b.Initializer("wzp", Q<int8_t>({}, {0}));
  b.Node("DequantizeLinear", {"a", "s", "zp"}, {"a_f"});
  b.Node("DequantizeLinear", {"w_q", "s", "wzp"}, {"w_f"});
  b.Node("MatMul", {"a_f", "w_f"}, {"m"});
  b.Node("QuantizeLinear", {"m", "s", "zp"}, {"y"});
  b.Output("y", DataType::kUint8, {2, 4});
  Graph g = LoadGraph(b);
  auto changed = QdqFusion().Run(&g);
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(*changed);
}

// xa → Q ─ DQ ─┐
// xb → Q ─ DQ ─┴─ Add → [Relu] → Q → DQ → y, all per-tensor, in uint8 or int8, with b of
// `b_shape` (the same as a's, or one that broadcasts).
template <typename T>
OnnxBuilder QdqAdd(bool relu, const std::vector<int64_t>& b_shape) {
  OnnxBuilder b;
  const std::vector<int64_t> a_shape = {2, 3, 5, 7};
  const T zero = std::is_same_v<T, uint8_t> ? 128 : 0;
  b.Input("xa", DataType::kFp32, a_shape);
  b.Input("xb", DataType::kFp32, b_shape);
  b.Initializer("a_s", F32({}, {0.021f}));
  b.Initializer("a_zp", Q<T>({}, {static_cast<T>(zero + 3)}));
  b.Initializer("b_s", F32({}, {0.034f}));
  b.Initializer("b_zp", Q<T>({}, {static_cast<T>(zero - 5)}));
  b.Initializer("c_s", F32({}, {0.047f}));
  b.Initializer("c_zp", Q<T>({}, {static_cast<T>(zero - 20)}));
  b.Node("QuantizeLinear", {"xa", "a_s", "a_zp"}, {"a_q"});
  b.Node("QuantizeLinear", {"xb", "b_s", "b_zp"}, {"b_q"});
  b.Node("DequantizeLinear", {"a_q", "a_s", "a_zp"}, {"a_f"});
  b.Node("DequantizeLinear", {"b_q", "b_s", "b_zp"}, {"b_f"});
  b.Node("Add", {"a_f", "b_f"}, {relu ? "sum" : "r"});
  if (relu) b.Node("Relu", {"sum"}, {"r"});
  b.Node("QuantizeLinear", {"r", "c_s", "c_zp"}, {"c_q"});
  b.Node("DequantizeLinear", {"c_q", "c_s", "c_zp"}, {"y"});
  b.Output("y", DataType::kFp32, a_shape);
  return b;
}

Graph WithShapes(const OnnxBuilder& builder) {
  Graph g = LoadGraph(builder);
  EXPECT_TRUE(StaticShapes().Run(&g).ok());
  return g;
}

// The fused node computes with the float operations of the four it replaces, so every byte
// agrees, saturation at both ends included.
template <typename T>
void ExpectQdqAddFusesExactly() {
  for (bool relu : {false, true}) {
    SCOPED_TRACE(relu ? "Add, Relu" : "Add");
    const Graph original = WithShapes(QdqAdd<T>(relu, {2, 3, 5, 7}));
    Graph g = original;
    auto changed = QdqFusion().Run(&g);
    ASSERT_TRUE(changed.ok() && *changed);
    ASSERT_TRUE(DeadNodeElimination().Run(&g).ok());
    EXPECT_EQ(CountOps(g, "QLinearAdd"), 1);
    EXPECT_EQ(CountOps(g, "Add"), 0);
    EXPECT_EQ(CountOps(g, "Relu"), 0);
    Tensor xa = RandomTensor({2, 3, 5, 7}, 21);
    Tensor xb = RandomTensor({2, 3, 5, 7}, 22);
    for (float& v : xa.mutable_values<float>()) v *= 4.0f;
    for (float& v : xb.mutable_values<float>()) v *= 6.0f;
    const Tensor inputs[] = {xa, xb};
    const auto fused = RunGraph(g, inputs);
    const auto reference = RunGraph(original, inputs);
    ASSERT_EQ(fused.size(), 1u);
    ASSERT_EQ(reference.size(), 1u);
    for (int64_t i = 0; i < reference[0].num_elements(); ++i) {
      ASSERT_EQ(fused[0].values<float>()[i], reference[0].values<float>()[i]) << i;
    }
  }
}

TEST(QdqFusionTest, QdqAddBecomesOneQLinearAddWithTheSameBytesInUint8) {
  ExpectQdqAddFusesExactly<uint8_t>();
}

TEST(QdqFusionTest, QdqAddBecomesOneQLinearAddWithTheSameBytesInInt8) {
  ExpectQdqAddFusesExactly<int8_t>();
}

TEST(QdqFusionTest, QdqAddThatBroadcastsIsLeftAlone) {
  Graph g = WithShapes(QdqAdd<uint8_t>(true, {1, 3, 1, 1}));
  auto changed = QdqFusion().Run(&g);
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(*changed);
  EXPECT_EQ(CountOps(g, "QLinearAdd"), 0);
  EXPECT_EQ(CountOps(g, "Add"), 1);
}

}  // namespace
}  // namespace brigade::engine::onnx
