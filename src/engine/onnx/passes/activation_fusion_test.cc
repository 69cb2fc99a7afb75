#include "engine/onnx/passes/activation_fusion.h"

#include "engine/onnx/passes/matmul_fusion.h"
#include "engine/onnx/test_util/graph_runner.h"
#include "gtest/gtest.h"

namespace brigade::engine::onnx {
namespace {

Tensor Scalar(float v) { return *Tensor::FromValues<float>(Shape{}, std::vector<float>{v}); }

TEST(ActivationFusionTest, ConvReluAndClipChainBecomeOneFusedConv) {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {1, 2, 6, 6});
  b.Initializer("w", RandomTensor({4, 2, 3, 3}, 1));
  b.Initializer("lo", Scalar(0.0f));
  b.Initializer("hi", Scalar(0.3f));
  b.Node("Conv", {"x", "w"}, {"c"});
  b.Node("Relu", {"c"}, {"r"});
  b.Node("Clip", {"r", "lo", "hi"}, {"y"});
  b.Output("y", DataType::kFp32, {1, 4, 4, 4});
  const Graph original = LoadGraph(b);
  Graph g = original;
  auto changed = ActivationFusion().Run(&g);
  ASSERT_TRUE(changed.ok() && *changed);
  ASSERT_EQ(g.nodes().size(), 1u);
  EXPECT_EQ(g.nodes()[0].op_type, "FusedConv");
  EXPECT_EQ(g.nodes()[0].attributes.GetStrings("post_ops").size(), 2u);
  const Tensor x = RandomTensor({1, 2, 6, 6}, 2);
  EXPECT_LT(MaxAbsDiff(RunGraph(g, {&x, 1})[0], RunGraph(original, {&x, 1})[0]), 1e-5f);
}

TEST(ActivationFusionTest, MatMulHardSigmoidAndLeakyReluKeepTheirParameters) {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {3, 5});
  b.Initializer("w", RandomTensor({5, 4}, 3));
  b.Node("MatMul", {"x", "w"}, {"t"});
  auto& hs = b.Node("HardSigmoid", {"t"}, {"h"});
  OnnxBuilder::SetFloat(hs, "alpha", 0.3f);
  OnnxBuilder::SetFloat(hs, "beta", 0.4f);
  OnnxBuilder::SetFloat(b.Node("LeakyRelu", {"h"}, {"y"}), "alpha", 0.2f);
  b.Output("y", DataType::kFp32, {3, 4});
  const Graph original = LoadGraph(b);
  Graph g = original;
  ASSERT_TRUE(MatMulFusion().Run(&g).ok());
  ASSERT_TRUE(ActivationFusion().Run(&g).ok());
  EXPECT_EQ(g.nodes().size(), 1u);
  const Tensor x = RandomTensor({3, 5}, 4);
  EXPECT_LT(MaxAbsDiff(RunGraph(g, {&x, 1})[0], RunGraph(original, {&x, 1})[0]), 1e-5f);
}

TEST(ActivationFusionTest, ClipWithRunTimeBoundsAndSharedOutputsAreNotFused) {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {1, 2, 4, 4});
  b.Input("hi", DataType::kFp32, {});
  b.Initializer("w", RandomTensor({2, 2, 1, 1}, 5));
  b.Node("Conv", {"x", "w"}, {"c"});
  b.Node("Clip", {"c", "", "hi"}, {"y"});
  b.Node("Relu", {"c"}, {"z"});  // second reader of c
  b.Output("y", DataType::kFp32, {1, 2, 4, 4});
  b.Output("z", DataType::kFp32, {1, 2, 4, 4});
  Graph g = LoadGraph(b);
  ASSERT_TRUE(ActivationFusion().Run(&g).ok());
  EXPECT_EQ(CountOps(g, "Clip"), 1);
  EXPECT_EQ(CountOps(g, "Relu"), 1);
}

}  // namespace
}  // namespace brigade::engine::onnx
