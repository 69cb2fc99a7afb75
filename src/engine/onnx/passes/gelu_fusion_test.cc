#include "engine/onnx/passes/gelu_fusion.h"

#include "engine/onnx/test_util/graph_runner.h"
#include "gtest/gtest.h"

namespace brigade::engine::onnx {
namespace {

Tensor Scalar(float v) { return *Tensor::FromValues<float>(Shape{}, std::vector<float>{v}); }

OnnxBuilder Gelu(bool half_first) {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {4, 8});
  b.Initializer("sqrt2", Scalar(1.4142135f));
  b.Initializer("one", Scalar(1.0f));
  b.Initializer("half", Scalar(0.5f));
  b.Node("Div", {"x", "sqrt2"}, {"d"});
  b.Node("Erf", {"d"}, {"e"});
  b.Node("Add", {"e", "one"}, {"a"});
  if (half_first) {
    b.Node("Mul", {"half", "x"}, {"hx"});
    b.Node("Mul", {"hx", "a"}, {"y"});
  } else {
    b.Node("Mul", {"x", "a"}, {"m"});
    b.Node("Mul", {"m", "half"}, {"y"});
  }
  b.Output("y", DataType::kFp32, {4, 8});
  return b;
}

TEST(GeluFusionTest, BothExportOrdersBecomeOneGelu) {
  for (bool half_first : {false, true}) {
    const Graph original = LoadGraph(Gelu(half_first));
    Graph g = original;
    auto changed = GeluFusion().Run(&g);
    ASSERT_TRUE(changed.ok() && *changed) << half_first;
    ASSERT_EQ(g.nodes().size(), 1u);
    EXPECT_EQ(g.nodes()[0].op_type, "Gelu");
    Tensor x = RandomTensor({4, 8}, 5);
    for (float& v : x.mutable_values<float>()) v *= 4.0f;
    EXPECT_LT(MaxAbsDiff(RunGraph(g, {&x, 1})[0], RunGraph(original, {&x, 1})[0]), 1e-5f);
  }
}

TEST(GeluFusionTest, AWrongConstantIsNotAGelu) {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {4});
  b.Initializer("three", Scalar(3.0f));
  b.Initializer("one", Scalar(1.0f));
  b.Initializer("half", Scalar(0.5f));
  b.Node("Div", {"x", "three"}, {"d"});
  b.Node("Erf", {"d"}, {"e"});
  b.Node("Add", {"e", "one"}, {"a"});
  b.Node("Mul", {"x", "a"}, {"m"});
  b.Node("Mul", {"m", "half"}, {"y"});
  b.Output("y", DataType::kFp32, {4});
  Graph g = LoadGraph(b);
  auto changed = GeluFusion().Run(&g);
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(*changed);
}

}  // namespace
}  // namespace brigade::engine::onnx
