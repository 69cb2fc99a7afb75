#include "engine/onnx/passes/dead_node_elimination.h"

#include "engine/onnx/test_util/graph_runner.h"
#include "gtest/gtest.h"

namespace brigade::engine::onnx {
namespace {

TEST(DeadNodeEliminationTest, RemovesIdentityDropoutAndUnusedBranches) {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {3});
  b.Node("Identity", {"x"}, {"i"});
  b.Node("Dropout", {"i"}, {"d"});
  b.Node("Relu", {"d"}, {"y"});
  b.Node("Exp", {"x"}, {"unused"});  // reaches no output
  b.Output("y", DataType::kFp32, {3});
  const Graph original = LoadGraph(b);
  Graph g = original;
  auto changed = DeadNodeElimination().Run(&g);
  ASSERT_TRUE(changed.ok() && *changed);
  EXPECT_EQ(g.nodes().size(), 1u);
  EXPECT_EQ(g.nodes()[0].op_type, "Relu");
  EXPECT_EQ(g.nodes()[0].inputs[0], g.inputs()[0]);
  const Tensor x = RandomTensor({3}, 7);
  EXPECT_EQ(MaxAbsDiff(RunGraph(g, {&x, 1})[0], RunGraph(original, {&x, 1})[0]), 0.0f);
}

TEST(DeadNodeEliminationTest, KeepsAnIdentityThatIsAGraphOutput) {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {3});
  b.Node("Identity", {"x"}, {"y"});
  b.Output("y", DataType::kFp32, {3});
  Graph g = LoadGraph(b);
  ASSERT_TRUE(DeadNodeElimination().Run(&g).ok());
  EXPECT_EQ(CountOps(g, "Identity"), 1);
  const Tensor x = RandomTensor({3}, 8);
  EXPECT_EQ(MaxAbsDiff(RunGraph(g, {&x, 1})[0], x), 0.0f);
}

TEST(DeadNodeEliminationTest, RemovesAPadOfZerosButKeepsARealPad) {
  for (int64_t pad : {0, 1}) {
    OnnxBuilder b;
    b.Input("x", DataType::kFp32, {1, 2, 3, 3});
    b.Initializer("pads", *Tensor::FromValues<int64_t>(
                              Shape{8}, std::vector<int64_t>{0, 0, pad, pad, 0, 0, pad, pad}));
    b.Node("Pad", {"x", "pads"}, {"p"});
    b.Node("Relu", {"p"}, {"y"});
    b.Output("y", DataType::kFp32, {1, 2, 3 + 2 * pad, 3 + 2 * pad});
    const Graph original = LoadGraph(b);
    Graph g = original;
    ASSERT_TRUE(DeadNodeElimination().Run(&g).ok());
    EXPECT_EQ(CountOps(g, "Pad"), pad == 0 ? 0 : 1) << pad;
    const Tensor x = RandomTensor({1, 2, 3, 3}, 9);
    EXPECT_EQ(MaxAbsDiff(RunGraph(g, {&x, 1})[0], RunGraph(original, {&x, 1})[0]), 0.0f) << pad;
  }
}

}  // namespace
}  // namespace brigade::engine::onnx
