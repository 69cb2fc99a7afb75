#include "optimize/quantizer.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "engine/onnx/loader/model_loader.h"
#include "engine/onnx/loader/tensor_proto.h"
#include "engine/onnx/test_util/graph_runner.h"
#include "engine/onnx/test_util/onnx_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "optimize/calibration.h"

namespace brigade::optimize {
namespace {

using engine::onnx::OnnxBuilder;
using engine::onnx::RandomTensor;
using ::testing::HasSubstr;

std::map<std::string, int> OpCounts(const ::onnx::ModelProto& model) {
  std::map<std::string, int> counts;
  for (const auto& node : model.graph().node()) ++counts[node.op_type()];
  return counts;
}

const ::onnx::TensorProto* Initializer(const ::onnx::ModelProto& model, const std::string& name) {
  for (const auto& init : model.graph().initializer()) {
    if (init.name() == name) return &init;
  }
  return nullptr;
}

std::vector<Tensor> RunModel(const ::onnx::ModelProto& model, const Tensor& input) {
  std::string bytes;
  model.SerializeToString(&bytes);
  auto loaded = engine::onnx::LoadOnnxBytes(bytes, "");
  EXPECT_TRUE(loaded.ok()) << loaded.status();
  if (!loaded.ok()) return {};
  const Tensor inputs[] = {input};
  return engine::onnx::RunGraph(std::move(loaded->graph), inputs);
}

// y = x · W (+ b): MatMul, or Gemm with transB and a bias.
OnnxBuilder MatMulModel(bool gemm) {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {-1, 8});
  if (gemm) {
    b.Initializer("w", RandomTensor({6, 8}, 1));
    b.Initializer("bias", RandomTensor({6}, 2));
    auto& node = b.Node("Gemm", {"x", "w", "bias"}, {"y"});
    OnnxBuilder::SetInt(node, "transB", 1);
    OnnxBuilder::SetFloat(node, "alpha", 0.5f);
  } else {
    b.Initializer("w", RandomTensor({8, 6}, 1));
    b.Node("MatMul", {"x", "w"}, {"y"});
  }
  b.Output("y", DataType::kFp32, {-1, 6});
  return b;
}

// x → Conv(3x3, bias) → Relu → MaxPool → Conv → y.
OnnxBuilder ConvModel() {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {-1, 2, 6, 6});
  b.Initializer("w1", RandomTensor({4, 2, 3, 3}, 3));
  b.Initializer("b1", RandomTensor({4}, 4));
  b.Initializer("w2", RandomTensor({3, 4, 1, 1}, 5));
  auto& c1 = b.Node("Conv", {"x", "w1", "b1"}, {"c1"});
  OnnxBuilder::SetInts(c1, "pads", {1, 1, 1, 1});
  b.Node("Relu", {"c1"}, {"r1"});
  auto& pool = b.Node("MaxPool", {"r1"}, {"p1"});
  OnnxBuilder::SetInts(pool, "kernel_shape", {2, 2});
  OnnxBuilder::SetInts(pool, "strides", {2, 2});
  b.Node("Conv", {"p1", "w2"}, {"y"});
  b.Output("y", DataType::kFp32, {-1, 3, 3, 3});
  return b;
}

QuantizeOptions DynamicOptions(bool reduce_range = false) {
  QuantizeOptions o;
  o.mode = QuantMode::kDynamic;
  o.reduce_range = reduce_range;
  return o;
}

float MaxAbs(const Tensor& t) {
  float m = 0;
  for (float v : t.values<float>()) m = std::max(m, std::abs(v));
  return m;
}

TEST(QuantizerTest, DynamicMatMulBecomesMatMulIntegerWithInt8PerChannelWeights) {
  OnnxBuilder b = MatMulModel(/*gemm=*/false);
  auto q = QuantizeModel(b.model(), DynamicOptions(), {});
  ASSERT_TRUE(q.ok()) << q.status();
  auto ops = OpCounts(q->model);
  EXPECT_EQ(ops["DynamicQuantizeLinear"], 1);
  EXPECT_EQ(ops["MatMulInteger"], 1);
  EXPECT_EQ(ops["MatMul"], 0);
  EXPECT_EQ(Initializer(q->model, "w"), nullptr) << "the fp32 weights are dropped";
  const auto* wq = Initializer(q->model, "w_quantized");
  ASSERT_NE(wq, nullptr);
  EXPECT_EQ(wq->data_type(), ::onnx::TensorProto::INT8);
  const auto* scale = Initializer(q->model, "w_scale");
  ASSERT_NE(scale, nullptr);
  EXPECT_EQ(scale->dims_size(), 1);
  EXPECT_EQ(scale->dims(0), 6) << "one scale per output column";
  ASSERT_EQ(q->decisions.size(), 1u);
  EXPECT_TRUE(q->decisions[0].quantized);

  const Tensor x = RandomTensor({5, 8}, 9);
  const auto want = RunModel(b.model(), x);
  const auto got = RunModel(q->model, x);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_LT(engine::onnx::MaxAbsDiff(want[0], got[0]), 0.03f * MaxAbs(want[0]));
}

TEST(QuantizerTest, DynamicGemmFoldsTransposeAlphaAndBias) {
  OnnxBuilder b = MatMulModel(/*gemm=*/true);
  auto q = QuantizeModel(b.model(), DynamicOptions(), {});
  ASSERT_TRUE(q.ok()) << q.status();
  auto ops = OpCounts(q->model);
  EXPECT_EQ(ops["Gemm"], 0);
  EXPECT_EQ(ops["MatMulInteger"], 1);
  EXPECT_EQ(ops["Add"], 1);
  const Tensor x = RandomTensor({4, 8}, 10);
  const auto want = RunModel(b.model(), x);
  const auto got = RunModel(q->model, x);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_LT(engine::onnx::MaxAbsDiff(want[0], got[0]), 0.03f * MaxAbs(want[0]));
}

TEST(QuantizerTest, ReduceRangeKeepsWeightsWithinSevenBits) {
  OnnxBuilder b = MatMulModel(/*gemm=*/false);
  auto q = QuantizeModel(b.model(), DynamicOptions(/*reduce_range=*/true), {});
  ASSERT_TRUE(q.ok()) << q.status();
  auto w = engine::onnx::TensorFromProto(*Initializer(q->model, "w_quantized"), "");
  ASSERT_TRUE(w.ok());
  int most = 0;
  for (int8_t v : w->values<int8_t>()) most = std::max(most, std::abs(static_cast<int>(v)));
  EXPECT_EQ(most, 64);
}

TEST(QuantizerTest, StaticConvGetsQdqPairsAndCalibratedRanges) {
  OnnxBuilder b = ConvModel();
  const QuantizeOptions options;
  const std::vector<std::string> tensors = TensorsToCalibrate(b.model(), options);
  // Inputs of both convs and the first conv's output after its Relu; the graph output stays.
  EXPECT_EQ(tensors, (std::vector<std::string>{"x", "r1", "p1"}));
  const Tensor samples = RandomTensor({32, 2, 6, 6}, 11);
  auto ranges = Calibrate(b.model(), "conv", "", tensors, samples, CalibrationOptions{});
  ASSERT_TRUE(ranges.ok()) << ranges.status();
  ASSERT_EQ(ranges->size(), 3u);
  EXPECT_GE(ranges->at("r1").min, 0.0f) << "after a Relu";
  auto q = QuantizeModel(b.model(), options, *ranges);
  ASSERT_TRUE(q.ok()) << q.status();
  auto ops = OpCounts(q->model);
  EXPECT_EQ(ops["QuantizeLinear"], 3);
  // Three activations, two weights, one bias (int32).
  EXPECT_EQ(ops["DequantizeLinear"], 6);
  EXPECT_EQ(ops["Conv"], 2);
  const auto* bias = Initializer(q->model, "b1_quantized");
  ASSERT_NE(bias, nullptr);
  EXPECT_EQ(bias->data_type(), ::onnx::TensorProto::INT32);

  const Tensor x = RandomTensor({3, 2, 6, 6}, 12);
  const auto want = RunModel(b.model(), x);
  const auto got = RunModel(q->model, x);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_LT(engine::onnx::MaxAbsDiff(want[0], got[0]), 0.05f * MaxAbs(want[0]));
}

// MobileNet's ReLU6 is a Clip: its output, not the convolution's, is what gets quantized, so the
// engine can fuse Conv + Clip + requantize as it fuses Conv + Relu.
TEST(QuantizerTest, StaticConvQuantizesAfterTheClipItFeedsAlone) {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {-1, 2, 6, 6});
  b.Initializer("w1", RandomTensor({4, 2, 3, 3}, 3));
  b.Initializer("w2", RandomTensor({3, 4, 1, 1}, 5));
  b.Initializer("lo", *Tensor::FromValues<float>(Shape{}, std::vector<float>{0.0f}));
  b.Initializer("hi", *Tensor::FromValues<float>(Shape{}, std::vector<float>{6.0f}));
  OnnxBuilder::SetInts(b.Node("Conv", {"x", "w1"}, {"c1"}), "pads", {1, 1, 1, 1});
  b.Node("Clip", {"c1", "lo", "hi"}, {"r1"});
  b.Node("Conv", {"r1", "w2"}, {"y"});
  b.Output("y", DataType::kFp32, {-1, 3, 6, 6});
  const std::vector<std::string> tensors = TensorsToCalibrate(b.model(), QuantizeOptions{});
  EXPECT_EQ(tensors, (std::vector<std::string>{"x", "r1"}));
}

TEST(QuantizerTest, ExclusionsAndUnsupportedOpsStayFp32AndAreListed) {
  OnnxBuilder b = ConvModel();
  RangeMap ranges{{"x", {-1, 1}}, {"r1", {0, 2}}, {"p1", {0, 2}}};
  QuantizeOptions options;
  options.exclude_nodes = {"Conv_3"};
  auto q = QuantizeModel(b.model(), options, ranges);
  ASSERT_TRUE(q.ok()) << q.status();
  ASSERT_EQ(q->decisions.size(), 2u);
  EXPECT_TRUE(q->decisions[0].quantized);
  EXPECT_FALSE(q->decisions[1].quantized);
  EXPECT_EQ(q->decisions[1].reason, "excluded by name");
  EXPECT_EQ(q->other_ops.at("Relu"), 1);
  EXPECT_EQ(q->other_ops.at("MaxPool"), 1);

  options = {};
  options.exclude_op_types = {"Conv"};
  q = QuantizeModel(b.model(), options, ranges);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(OpCounts(q->model)["QuantizeLinear"], 0);
  EXPECT_EQ(q->decisions[0].reason, "excluded by op type");

  q = QuantizeModel(b.model(), DynamicOptions(), {});
  ASSERT_TRUE(q.ok());
  EXPECT_THAT(q->decisions[0].reason, HasSubstr("MatMul and Gemm only"));

  q = QuantizeModel(b.model(), QuantizeOptions{}, RangeMap{});
  ASSERT_TRUE(q.ok());
  EXPECT_THAT(q->decisions[0].reason, HasSubstr("no calibrated range for input 'x'"));
}

TEST(QuantizerTest, NonConstantWeightsStayFp32) {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {2, 3});
  b.Input("w", DataType::kFp32, {3, 2});
  b.Node("MatMul", {"x", "w"}, {"y"});
  b.Output("y", DataType::kFp32, {2, 2});
  auto q = QuantizeModel(b.model(), DynamicOptions(), {});
  ASSERT_TRUE(q.ok());
  EXPECT_THAT(q->decisions[0].reason, HasSubstr("not a constant"));
  EXPECT_EQ(OpCounts(q->model)["MatMul"], 1);
}

TEST(QuantizerTest, OldOpsetsAreRefusedOrPerTensor) {
  OnnxBuilder old(9);
  old.Input("x", DataType::kFp32, {-1, 8});
  old.Initializer("w", RandomTensor({8, 6}, 1));
  old.Node("MatMul", {"x", "w"}, {"y"});
  old.Output("y", DataType::kFp32, {-1, 6});
  auto q = QuantizeModel(old.model(), DynamicOptions(), {});
  EXPECT_THAT(q.status().message(), HasSubstr("opset 9"));

  OnnxBuilder b11(11);
  b11.Input("x", DataType::kFp32, {-1, 8});
  b11.Initializer("w", RandomTensor({8, 6}, 1));
  b11.Node("MatMul", {"x", "w"}, {"y"});
  b11.Output("y", DataType::kFp32, {-1, 6});
  q = QuantizeModel(b11.model(), DynamicOptions(), {});
  ASSERT_TRUE(q.ok()) << q.status();
  ASSERT_EQ(q->notes.size(), 1u);
  EXPECT_THAT(q->notes[0], HasSubstr("per tensor"));
  EXPECT_EQ(Initializer(q->model, "w_scale")->dims_size(), 0);
}

TEST(QuantizerTest, ActivationParamsIncludeZero) {
  QuantParams p = ActivationParams({0.0f, 2.55f});
  EXPECT_FLOAT_EQ(p.scale, 0.01f);
  EXPECT_EQ(p.zero_point, 0);
  p = ActivationParams({-1.0f, 1.0f});
  EXPECT_NEAR(p.zero_point, 128, 1);
  p = ActivationParams({1.0f, 2.0f});  // widened to [0, 2]
  EXPECT_EQ(p.zero_point, 0);
  p = ActivationParams({0.0f, 0.0f});
  EXPECT_FLOAT_EQ(p.scale, 1.0f);
}

}  // namespace
}  // namespace brigade::optimize
