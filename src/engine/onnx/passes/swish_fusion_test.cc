#include "engine/onnx/passes/swish_fusion.h"

#include "engine/onnx/passes/activation_fusion.h"
#include "engine/onnx/test_util/graph_runner.h"
#include "gtest/gtest.h"

namespace brigade::engine::onnx {
namespace {

// Conv → gate → Mul(conv, gate) (or Mul(gate, conv) with `gate_first`) on x [1, 3, 6, 6]; 16
// output channels, so the convolution writes nChw16c.
OnnxBuilder GatedConv(const std::string& gate, float alpha, float beta, bool gate_first) {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {1, 3, 6, 6});
  b.Initializer("w", RandomTensor({16, 3, 3, 3}, 1));
  b.Node("Conv", {"x", "w"}, {"c"});
  auto& g = b.Node(gate, {"c"}, {"g"});
  if (gate == "HardSigmoid") {
    OnnxBuilder::SetFloat(g, "alpha", alpha);
    OnnxBuilder::SetFloat(g, "beta", beta);
  }
  b.Node("Mul",
         gate_first ? std::vector<std::string>{"g", "c"} : std::vector<std::string>{"c", "g"},
         {"y"});
  b.Output("y", DataType::kFp32, {1, 16, 4, 4});
  return b;
}

// Runs SwishFusion then ActivationFusion; returns the rewritten graph.
Graph Fuse(const Graph& original) {
  Graph g = original;
  EXPECT_TRUE(SwishFusion().Run(&g).ok());
  EXPECT_TRUE(ActivationFusion().Run(&g).ok());
  return g;
}

TEST(SwishFusionTest, ConvTimesItsHardSigmoidBecomesOneFusedConvWithHardSwish) {
  for (bool gate_first : {false, true}) {
    const Graph original = LoadGraph(GatedConv("HardSigmoid", 1.0f / 6.0f, 0.5f, gate_first));
    const Graph g = Fuse(original);
    ASSERT_EQ(g.live_node_count(), 1u) << gate_first;
    EXPECT_EQ(g.nodes()[0].op_type, "FusedConv");
    ASSERT_EQ(g.nodes()[0].attributes.GetStrings("post_ops").size(), 1u);
    EXPECT_EQ(g.nodes()[0].attributes.GetStrings("post_ops")[0], "HardSwish");
    const Tensor x = RandomTensor({1, 3, 6, 6}, 2);
    EXPECT_LT(MaxAbsDiff(RunGraph(g, {&x, 1})[0], RunGraph(original, {&x, 1})[0]), 1e-5f);
  }
}

TEST(SwishFusionTest, ConvTimesItsSigmoidBecomesOneFusedConvWithSwish) {
  for (bool gate_first : {false, true}) {
    const Graph original = LoadGraph(GatedConv("Sigmoid", 0, 0, gate_first));
    const Graph g = Fuse(original);
    ASSERT_EQ(g.live_node_count(), 1u) << gate_first;
    EXPECT_EQ(g.nodes()[0].attributes.GetStrings("post_ops")[0], "Swish");
    const Tensor x = RandomTensor({1, 3, 6, 6}, 3);
    EXPECT_LT(MaxAbsDiff(RunGraph(g, {&x, 1})[0], RunGraph(original, {&x, 1})[0]), 1e-5f);
  }
}

TEST(SwishFusionTest, AStandaloneSwishComputesXTimesSigmoidX) {
  // The producer is a graph input: the Swish runs on its own (a oneDNN eltwise).
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {2, 5});
  b.Node("Sigmoid", {"x"}, {"g"});
  b.Node("Mul", {"g", "x"}, {"y"});
  b.Output("y", DataType::kFp32, {2, 5});
  const Graph original = LoadGraph(b);
  Graph g = original;
  ASSERT_TRUE(SwishFusion().Run(&g).ok());
  ASSERT_EQ(g.live_node_count(), 1u);
  EXPECT_EQ(g.nodes()[0].op_type, "Swish");
  const Tensor x = RandomTensor({2, 5}, 4);
  EXPECT_LT(MaxAbsDiff(RunGraph(g, {&x, 1})[0], RunGraph(original, {&x, 1})[0]), 1e-6f);
}

TEST(SwishFusionTest, OtherHardSigmoidParametersAndSharedGatesStay) {
  // alpha 0.2 is not hardswish's 1/6.
  Graph other = LoadGraph(GatedConv("HardSigmoid", 0.2f, 0.5f, false));
  auto changed = SwishFusion().Run(&other);
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(*changed);
  // The gate has a second reader (a graph output): the Mul is rewritten, the gate stays.
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {4});
  b.Node("Sigmoid", {"x"}, {"g"});
  b.Node("Mul", {"x", "g"}, {"y"});
  b.Output("y", DataType::kFp32, {4});
  b.Output("g", DataType::kFp32, {4});
  Graph shared = LoadGraph(b);
  ASSERT_TRUE(SwishFusion().Run(&shared).ok());
  EXPECT_EQ(CountOps(shared, "Sigmoid"), 1);
  EXPECT_EQ(CountOps(shared, "Swish"), 1);
  EXPECT_EQ(CountOps(shared, "Mul"), 0);
}

}  // namespace
}  // namespace brigade::engine::onnx
