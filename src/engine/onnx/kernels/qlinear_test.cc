// The oneDNN u8s8 path of QLinearConv / QLinearMatMul (constant weights) must compute exactly
// what the integer reference loops compute (run-time weights force the loops).

#include <algorithm>
#include <cmath>

#include "engine/onnx/exec/compiled_model.h"
#include "engine/onnx/exec/session.h"
#include "engine/onnx/kernels/cpu_isa.h"
#include "engine/onnx/kernels/dnnl_util.h"
#include "engine/onnx/kernels/qlinear_dnnl.h"
#include "engine/onnx/test_util/graph_runner.h"
#include "gtest/gtest.h"

namespace brigade::engine::onnx {
namespace {

// Runs a one-node graph and reports whether its kernel is a oneDNN primitive.
// `seven_bit`: the weights fit 7 bits, which oneDNN runs exactly on any CPU.
std::vector<Tensor> RunChecked(const OnnxBuilder& b, std::span<const Tensor> inputs,
                               bool expect_onednn, bool seven_bit = false) {
  auto compiled = CompiledModel::Compile("q", LoadGraph(b));
  EXPECT_TRUE(compiled.ok());
  auto session = Session::Create(*compiled, Session::Options{});
  EXPECT_TRUE(session.ok());
  std::vector<Tensor> outputs;
  EXPECT_TRUE((*session)->Run(inputs, &outputs).ok());
  const ExecutionPlan* plan = (*session)->last_plan();
  EXPECT_NE(plan, nullptr);
  bool onednn = false;
  for (const auto& step : plan->steps) {
    onednn = onednn || dynamic_cast<const DnnlKernel*>(step.kernel.get()) != nullptr;
  }
  // oneDNN's int8 kernels are used only where they are exact (VNNI, or 7-bit weights).
  EXPECT_EQ(onednn, expect_onednn && (DnnlInt8IsExact() || seven_bit));
  return outputs;
}

template <typename T>
Tensor Values(std::vector<int64_t> shape, std::vector<T> v) {
  return *Tensor::FromValues<T>(Shape(shape.begin(), shape.end()), v);
}

template <typename T>
Tensor Pattern(std::vector<int64_t> shape, int mul, int offset) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<T> v;
  for (int64_t i = 0; i < n; ++i) {
    const int range = std::is_same_v<T, uint8_t> ? 256 : 255;
    const int base = std::is_same_v<T, uint8_t> ? 0 : -127;
    v.push_back(static_cast<T>(base + static_cast<int>((i * mul + offset) % range)));
  }
  return Values<T>(shape, v);
}

// QLinearConv with weights either as an initializer (oneDNN) or as a graph input (loop).
OnnxBuilder QConv(bool constant_weights, int64_t group, const Tensor& w) {
  OnnxBuilder b;
  b.Input("x", DataType::kUint8, {1, 8, 5, 5});
  if (constant_weights) {
    b.Initializer("w", w);
  } else {
    b.Input("w", DataType::kInt8, {8, 8 / group, 3, 3});
  }
  b.Initializer("x_s", Values<float>({}, {0.03f}));
  b.Initializer("x_zp", Values<uint8_t>({}, {120}));
  std::vector<float> ws;
  ws.reserve(8);
  for (int i = 0; i < 8; ++i) ws.push_back(0.002f * static_cast<float>(i + 1));
  b.Initializer("w_s", Values<float>({8}, ws));
  b.Initializer("w_zp", Values<int8_t>({8}, std::vector<int8_t>(8, 0)));
  b.Initializer("y_s", Values<float>({}, {0.04f}));
  b.Initializer("y_zp", Values<uint8_t>({}, {100}));
  b.Initializer("bias", Values<int32_t>({8}, {-500, 400, 0, 1200, -30, 77, 900, -1000}));
  auto& node =
      b.Node("QLinearConv", {"x", "x_s", "x_zp", "w", "w_s", "w_zp", "y_s", "y_zp", "bias"}, {"y"});
  OnnxBuilder::SetInts(node, "pads", {1, 1, 1, 1});
  OnnxBuilder::SetInt(node, "group", group);
  b.Output("y", DataType::kUint8, {1, 8, 5, 5});
  return b;
}

TEST(QLinearKernelsTest, OneDnnConvMatchesTheIntegerDefinitionExactly) {
  for (int64_t group : {1, 2, 8}) {
    const Tensor w = Pattern<int8_t>({8, 8 / group, 3, 3}, 53, 7);
    const Tensor x = Pattern<uint8_t>({1, 8, 5, 5}, 31, 3);
    const auto fast = RunChecked(QConv(true, group, w), {&x, 1}, true);
    const Tensor loop_inputs[] = {x, w};
    const auto loop = RunChecked(QConv(false, group, w), loop_inputs, false);
    ASSERT_EQ(fast.size(), 1u);
    ASSERT_EQ(loop.size(), 1u);
    for (int64_t i = 0; i < int64_t{8} * 25; ++i) {
      EXPECT_EQ(fast[0].values<uint8_t>()[i], loop[0].values<uint8_t>()[i])
          << "group " << group << " element " << i;
    }
  }
}

// Without VNNI oneDNN multiplies u8·s8 pairs into int16 (vpmaddubsw); weights within [-64, 64]
// keep every pair sum in range, so the oneDNN path runs (on every CPU) and is exact, at the
// extremes too: x at 255 against weights at ±64.
TEST(QLinearKernelsTest, SevenBitWeightsRunOnOneDnnExactlyOnEveryCpu) {
  std::vector<int8_t> wv;
  wv.reserve(size_t{8} * 8 * 9);
  for (int i = 0; i < 8 * 8 * 9; ++i) {
    wv.push_back(static_cast<int8_t>(i % 3 == 0 ? 64 : (i * 29) % 129 - 64));
  }
  const Tensor w = Values<int8_t>({8, 8, 3, 3}, wv);
  std::vector<uint8_t> xv;
  xv.reserve(size_t{8} * 25);
  for (int i = 0; i < int64_t{8} * 25; ++i) {
    xv.push_back(static_cast<uint8_t>(i % 2 == 0 ? 255 : (i * 31) % 256));
  }
  const Tensor x = Values<uint8_t>({1, 8, 5, 5}, xv);
  const auto fast = RunChecked(QConv(true, 1, w), {&x, 1}, true, /*seven_bit=*/true);
  const Tensor loop_inputs[] = {x, w};
  const auto loop = RunChecked(QConv(false, 1, w), loop_inputs, false);
  ASSERT_EQ(fast.size(), 1u);
  ASSERT_EQ(loop.size(), 1u);
  for (int64_t i = 0; i < int64_t{8} * 25; ++i) {
    EXPECT_EQ(fast[0].values<uint8_t>()[i], loop[0].values<uint8_t>()[i]) << i;
  }
}

// Two int8 convolutions in a row whose dequantized outputs meet at a residual Add, as in an INT8
// ResNet block: the second convolution and the Add read the first's blocked (nhwc) output as it
// is, with no reorder to plain between them, and compute what the integer loops compute.
OnnxBuilder QResidual(bool constant_weights, const Tensor& w1, const Tensor& w2) {
  OnnxBuilder b;
  b.Input("x", DataType::kUint8, {1, 16, 6, 6});
  if (constant_weights) {
    b.Initializer("w1", w1);
    b.Initializer("w2", w2);
  } else {
    b.Input("w1", DataType::kInt8, {16, 16, 3, 3});
    b.Input("w2", DataType::kInt8, {16, 16, 1, 1});
  }
  b.Initializer("s", Values<float>({}, {0.03f}));
  b.Initializer("zp", Values<uint8_t>({}, {110}));
  b.Initializer("w_s", Values<float>({}, {0.004f}));
  b.Initializer("w_zp", Values<int8_t>({}, {0}));
  b.Initializer("s2", Values<float>({}, {0.05f}));
  b.Initializer("zp2", Values<uint8_t>({}, {90}));
  OnnxBuilder::SetInts(
      b.Node("QLinearConv", {"x", "s", "zp", "w1", "w_s", "w_zp", "s", "zp"}, {"a"}), "pads",
      {1, 1, 1, 1});
  b.Node("QLinearConv", {"a", "s", "zp", "w2", "w_s", "w_zp", "s2", "zp2"}, {"c"});
  b.Node("DequantizeLinear", {"a", "s", "zp"}, {"fa"});
  b.Node("DequantizeLinear", {"c", "s2", "zp2"}, {"fc"});
  b.Node("Add", {"fa", "fc"}, {"y"});
  b.Output("y", DataType::kFp32, {1, 16, 6, 6});
  return b;
}

TEST(QLinearKernelsTest, ChainedConvolutionsAndResidualAddStayInTheirLayout) {
  const Tensor w1 = Pattern<int8_t>({16, 16, 3, 3}, 37, 5);
  const Tensor w2 = Pattern<int8_t>({16, 16, 1, 1}, 41, 9);
  const Tensor x = Pattern<uint8_t>({1, 16, 6, 6}, 29, 1);
  auto compiled = CompiledModel::Compile("q", LoadGraph(QResidual(true, w1, w2)));
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  auto session = Session::Create(*compiled, Session::Options{});
  ASSERT_TRUE(session.ok()) << session.status();
  std::vector<Tensor> fast;
  ASSERT_TRUE((*session)->Run({&x, 1}, &fast).ok());
  const Tensor loop_inputs[] = {x, w1, w2};
  const auto loop = RunChecked(QResidual(false, w1, w2), loop_inputs, false);
  ASSERT_EQ(fast.size(), 1u);
  ASSERT_EQ(loop.size(), 1u);
  // Within one step of the second convolution's output scale (0.05): given its nhwc input
  // explicitly, oneDNN picks another int8 implementation than for a plain one, and that one
  // rounds a few near-ties the other way (5 of these 576 elements; a plain input matched the
  // loops exactly). ResNet-50's INT8 logits came out bit-identical with and without the reorders.
  for (int64_t i = 0; i < int64_t{16} * 36; ++i) {
    EXPECT_NEAR(fast[0].values<float>()[i], loop[0].values<float>()[i], 0.0501) << i;
  }
  if (!DnnlInt8IsExact()) GTEST_SKIP() << "no VNNI: oneDNN's int8 path is not taken";
  int reorders = 0;
  bool blocked_add = false;
  for (const auto& step : (*session)->last_plan()->steps) {
    reorders += step.op_type == "Reorder" ? 1 : 0;
    blocked_add = blocked_add || (step.op_type == "Add" && reorders == 0);
  }
  // Only the graph output goes back to plain, after the Add.
  EXPECT_TRUE(blocked_add);
  EXPECT_LE(reorders, 1);
}

OnnxBuilder QMatMul(bool constant_weights, const Tensor& w) {
  OnnxBuilder b;
  b.Input("a", DataType::kUint8, {2, 3, 16});
  if (constant_weights) {
    b.Initializer("w", w);
  } else {
    b.Input("w", DataType::kInt8, {16, 8});
  }
  b.Initializer("a_s", Values<float>({}, {0.05f}));
  b.Initializer("a_zp", Values<uint8_t>({}, {7}));
  std::vector<float> ws;
  ws.reserve(8);
  for (int i = 0; i < 8; ++i) ws.push_back(0.01f + 0.001f * static_cast<float>(i));
  b.Initializer("w_s", Values<float>({8}, ws));
  b.Initializer("w_zp", Values<int8_t>({8}, std::vector<int8_t>(8, 0)));
  b.Initializer("y_s", Values<float>({}, {0.2f}));
  b.Initializer("y_zp", Values<int8_t>({}, {-3}));
  b.Node("QLinearMatMul", {"a", "a_s", "a_zp", "w", "w_s", "w_zp", "y_s", "y_zp"}, {"y"});
  b.Output("y", DataType::kInt8, {2, 3, 8});
  return b;
}

TEST(QLinearKernelsTest, OneDnnMatMulMatchesTheIntegerDefinitionExactly) {
  const Tensor w = Pattern<int8_t>({16, 8}, 29, 5);
  const Tensor a = Pattern<uint8_t>({2, 3, 16}, 13, 1);
  const auto fast = RunChecked(QMatMul(true, w), {&a, 1}, true);
  const Tensor loop_inputs[] = {a, w};
  const auto loop = RunChecked(QMatMul(false, w), loop_inputs, false);
  ASSERT_EQ(fast.size(), 1u);
  for (int64_t i = 0; i < int64_t{2} * 3 * 8; ++i) {
    EXPECT_EQ(fast[0].values<int8_t>()[i], loop[0].values<int8_t>()[i]) << i;
  }
}

// Dynamic quantization as the quantizer writes it: DynamicQuantizeLinear's run-time zero point
// feeds MatMulInteger, which runs on oneDNN when the weights are constant.
OnnxBuilder DynamicMatMul(bool constant_weights, const Tensor& w) {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {2, 3, 16});
  if (constant_weights) {
    b.Initializer("w", w);
  } else {
    b.Input("w", DataType::kInt8, {16, 8});
  }
  b.Node("DynamicQuantizeLinear", {"x"}, {"xq", "xs", "xzp"});
  b.Node("MatMulInteger", {"xq", "w", "xzp"}, {"y"});
  b.Output("y", DataType::kInt32, {2, 3, 8});
  return b;
}

TEST(QLinearKernelsTest, OneDnnMatMulIntegerTakesARunTimeZeroPointExactly) {
  const Tensor w = Pattern<int8_t>({16, 8}, 29, 5);
  // Mostly positive values, so the zero point is far from 0 and matters.
  Tensor x = RandomTensor({2, 3, 16}, 3);
  for (float& v : x.mutable_values<float>()) v = 3 * v + 2;
  const auto fast = RunChecked(DynamicMatMul(true, w), {&x, 1}, true);
  const Tensor loop_inputs[] = {x, w};
  const auto loop = RunChecked(DynamicMatMul(false, w), loop_inputs, false);
  ASSERT_EQ(fast.size(), 1u);
  int64_t nonzero = 0;
  for (int64_t i = 0; i < int64_t{2} * 3 * 8; ++i) {
    EXPECT_EQ(fast[0].values<int32_t>()[i], loop[0].values<int32_t>()[i]) << i;
    nonzero += fast[0].values<int32_t>()[i] != 0;
  }
  EXPECT_GT(nonzero, 40);
}

// DynamicQuantizeLinear over a tensor long enough to be split across threads and vector lanes:
// the range includes 0, and every element rounds as the definition says.
TEST(QuantizeLinearKernelTest, DynamicQuantizationOfALongTensorFollowsTheDefinition) {
  constexpr int64_t kCount = (int64_t{1} << 17) + 37;
  Tensor x = RandomTensor({kCount}, 11);
  for (float& v : x.mutable_values<float>()) v = 4 * v + 3;  // [-1, 7): 0 inside, min < 0
  x.mutable_values<float>()[kCount - 1] = 9.5f;              // the maximum in the scalar tail
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {kCount});
  b.Node("DynamicQuantizeLinear", {"x"}, {"y", "s", "zp"});
  b.Output("y", DataType::kUint8, {kCount});
  b.Output("s", DataType::kFp32, {});
  b.Output("zp", DataType::kUint8, {});
  const auto out = RunGraph(LoadGraph(b), {&x, 1}, 2);
  ASSERT_EQ(out.size(), 3u);
  const auto xs = x.values<float>();
  const float lo = std::min(0.0f, *std::min_element(xs.begin(), xs.end()));
  const float hi = std::max(0.0f, *std::max_element(xs.begin(), xs.end()));
  const float scale = (hi - lo) / 255.0f;
  EXPECT_EQ(out[1].values<float>()[0], scale);
  const auto zp = static_cast<uint8_t>(std::clamp(std::nearbyint(-lo / scale), 0.0f, 255.0f));
  EXPECT_EQ(out[2].values<uint8_t>()[0], zp);
  for (int64_t i = 0; i < kCount; ++i) {
    const float q = std::clamp(std::nearbyint(xs[i] / scale) + zp, 0.0f, 255.0f);
    ASSERT_EQ(out[0].values<uint8_t>()[i], static_cast<uint8_t>(q)) << i;
  }
}

// QuantizeLinear's vectorized loop: half to even (x.5 steps), saturation at both ends, and a
// tensor long enough to be split across threads.
TEST(QuantizeLinearKernelTest, RoundsHalfToEvenAndSaturatesOverLongTensors) {
  constexpr int64_t kN = 100000;
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {kN});
  b.Initializer("s", Values<float>({}, {0.5f}));
  b.Initializer("zp", Values<uint8_t>({}, {10}));
  b.Node("QuantizeLinear", {"x", "s", "zp"}, {"y"});
  b.Output("y", DataType::kUint8, {kN});
  std::vector<float> xv;
  for (int64_t i = 0; i < kN; ++i) xv.push_back(static_cast<float>(i % 700) * 0.25f - 20.0f);
  const Tensor x = Values<float>({kN}, xv);
  const auto y = RunGraph(LoadGraph(b), {&x, 1}, /*threads=*/2);
  ASSERT_EQ(y.size(), 1u);
  for (int64_t i = 0; i < kN; ++i) {
    const double want =
        std::clamp(std::nearbyint(static_cast<double>(xv[i] / 0.5f)) + 10, 0.0, 255.0);
    ASSERT_EQ(y[0].values<uint8_t>()[i], static_cast<uint8_t>(want)) << "x = " << xv[i];
  }
}

// A per-tensor Q → DQ after a convolution reads the convolution's blocked output in place when
// it has no padding (16 channels) and through a reorder when it has (3 channels): either way
// the values are DQ(Q(conv)) as computed on the plain tensor.
TEST(QuantizeLinearKernelTest, QdqAfterABlockedConvolutionKeepsItsValues) {
  for (int64_t channels : {16, 3}) {
    SCOPED_TRACE(channels);
    auto conv = [&](bool qdq) {
      OnnxBuilder b;
      b.Input("x", DataType::kFp32, {1, 4, 8, 8});
      b.Initializer("w", RandomTensor({channels, 4, 3, 3}, 5));
      b.Initializer("s", Values<float>({}, {0.02f}));
      b.Initializer("zp", Values<uint8_t>({}, {100}));
      OnnxBuilder::SetInts(b.Node("Conv", {"x", "w"}, {qdq ? "c" : "y"}), "pads", {1, 1, 1, 1});
      if (qdq) {
        b.Node("QuantizeLinear", {"c", "s", "zp"}, {"q"});
        b.Node("DequantizeLinear", {"q", "s", "zp"}, {"y"});
      }
      b.Output("y", DataType::kFp32, {1, channels, 8, 8});
      return b;
    };
    const Tensor x = RandomTensor({1, 4, 8, 8}, 6);
    const auto plain = RunGraph(LoadGraph(conv(false)), {&x, 1});
    const auto qdq = RunGraph(LoadGraph(conv(true)), {&x, 1});
    ASSERT_EQ(plain.size(), 1u);
    ASSERT_EQ(qdq.size(), 1u);
    for (int64_t i = 0; i < plain[0].num_elements(); ++i) {
      const float c = plain[0].values<float>()[i];
      const double q = std::clamp(std::nearbyint(static_cast<double>(c / 0.02f)) + 100, 0.0, 255.0);
      EXPECT_FLOAT_EQ(qdq[0].values<float>()[i], static_cast<float>((q - 100) * 0.02f)) << i;
    }
  }
}

// `brigade doctor` reports the ISA by name and the int8 decision beside it: the two must agree
// (VNNI is in every ISA from avx512_core_vnni up, and in avx2_vnni).
TEST(DnnlCpuIsaTest, NameIsKnownAndAgreesWithInt8Exactness) {
  const std::string_view name = DnnlCpuIsaName();
  ASSERT_NE(name, "unknown");
  const bool vnni = name == "avx2_vnni" || name == "avx512_core_vnni" ||
                    name == "avx512_core_bf16" || name == "avx512_core_amx";
  EXPECT_EQ(DnnlInt8IsExact(), vnni) << name;
}

}  // namespace
}  // namespace brigade::engine::onnx
