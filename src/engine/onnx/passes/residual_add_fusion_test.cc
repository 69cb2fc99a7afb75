#include "engine/onnx/passes/residual_add_fusion.h"

#include "engine/onnx/passes/activation_fusion.h"
#include "engine/onnx/passes/matmul_fusion.h"
#include "engine/onnx/test_util/graph_runner.h"
#include "gtest/gtest.h"

namespace brigade::engine::onnx {
namespace {

// ResNet's block tail: y = relu(conv2(x) + conv1(x)).
OnnxBuilder ResidualBlock() {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {-1, 8, 6, 6});
  b.Initializer("w1", RandomTensor({8, 8, 1, 1}, 1));
  b.Initializer("w2", RandomTensor({8, 8, 3, 3}, 2));
  b.Node("Conv", {"x", "w1"}, {"short"});
  OnnxBuilder::SetInts(b.Node("Conv", {"x", "w2"}, {"main"}), "pads", {1, 1, 1, 1});
  b.Node("Add", {"main", "short"}, {"sum"});
  b.Node("Relu", {"sum"}, {"y"});
  b.Output("y", DataType::kFp32, {-1, 8, 6, 6});
  return b;
}

TEST(ResidualAddFusionTest, ConvResidualAddAndReluJoinTheLaterConv) {
  const Graph original = LoadGraph(ResidualBlock());
  Graph g = original;
  ASSERT_TRUE(ActivationFusion().Run(&g).ok());
  auto changed = ResidualAddFusion().Run(&g);
  ASSERT_TRUE(changed.ok() && *changed);
  ASSERT_TRUE(ActivationFusion().Run(&g).ok());
  EXPECT_EQ(CountOps(g, "Add"), 0);
  EXPECT_EQ(CountOps(g, "Relu"), 0);
  ASSERT_EQ(CountOps(g, "FusedConv"), 2);
  const Node& last = g.nodes().back();
  const auto ops = last.attributes.GetStrings("post_ops");
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0], "Add");
  EXPECT_EQ(ops[1], "Relu");
  for (int64_t batch : {1, 2}) {
    const Tensor x = RandomTensor({batch, 8, 6, 6}, 3);
    EXPECT_LT(MaxAbsDiff(RunGraph(g, {&x, 1})[0], RunGraph(original, {&x, 1})[0]), 1e-4f);
  }
}

TEST(ResidualAddFusionTest, BroadcastMaskJoinsAMatMul) {
  OnnxBuilder b;
  b.Input("q", DataType::kFp32, {2, 3, 4, 5});
  b.Input("k", DataType::kFp32, {2, 3, 5, 4});
  b.Input("mask", DataType::kFp32, {2, 1, 1, 4});
  b.Node("MatMul", {"q", "k"}, {"s"});
  b.Node("Add", {"s", "mask"}, {"y"});
  b.Output("y", DataType::kFp32, {2, 3, 4, 4});
  const Graph original = LoadGraph(b);
  Graph g = original;
  ASSERT_TRUE(MatMulFusion().Run(&g).ok());
  ASSERT_TRUE(ResidualAddFusion().Run(&g).ok());
  EXPECT_EQ(CountOps(g, "Add"), 0);
  const Tensor in[] = {RandomTensor({2, 3, 4, 5}, 4), RandomTensor({2, 3, 5, 4}, 5),
                       RandomTensor({2, 1, 1, 4}, 6)};
  EXPECT_LT(MaxAbsDiff(RunGraph(g, in)[0], RunGraph(original, in)[0]), 1e-5f);
}

TEST(ResidualAddFusionTest, AnAddThatWidensTheOutputIsNotFused) {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {1, 4});
  b.Input("wide", DataType::kFp32, {3, 4});
  b.Initializer("w", RandomTensor({4, 4}, 7));
  b.Node("MatMul", {"x", "w"}, {"t"});
  b.Node("Add", {"t", "wide"}, {"y"});
  b.Output("y", DataType::kFp32, {3, 4});
  Graph g = LoadGraph(b);
  ASSERT_TRUE(MatMulFusion().Run(&g).ok());
  ASSERT_TRUE(ResidualAddFusion().Run(&g).ok());
  EXPECT_EQ(CountOps(g, "Add"), 1);
}

}  // namespace
}  // namespace brigade::engine::onnx
