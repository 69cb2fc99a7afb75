#include "engine/onnx/passes/constant_folding.h"

#include "engine/onnx/test_util/graph_runner.h"
#include "gtest/gtest.h"

namespace brigade::engine::onnx {
namespace {

TEST(ConstantFoldingTest, FoldsNodesWhoseInputsAreAllConstantAndKeepsResults) {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {2, 3});
  b.Initializer("w", RandomTensor({4, 3}, 1));
  OnnxBuilder::SetInts(b.Node("Transpose", {"w"}, {"wt"}), "perm", {1, 0});
  b.Node("Neg", {"wt"}, {"nwt"});
  b.Node("MatMul", {"x", "nwt"}, {"y"});
  b.Output("y", DataType::kFp32, {2, 4});
  const Graph original = LoadGraph(b);
  Graph folded = original;
  auto changed = ConstantFolding().Run(&folded);
  ASSERT_TRUE(changed.ok());
  EXPECT_TRUE(*changed);
  EXPECT_EQ(CountOps(folded, "Transpose"), 0);
  EXPECT_EQ(CountOps(folded, "Neg"), 0);
  EXPECT_EQ(CountOps(folded, "MatMul"), 1);
  const Tensor x = RandomTensor({2, 3}, 2);
  const auto want = RunGraph(original, {&x, 1});
  const auto got = RunGraph(folded, {&x, 1});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(MaxAbsDiff(got[0], want[0]), 0.0f);
}

TEST(ConstantFoldingTest, LeavesNodesReadingRunTimeValues) {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {2});
  b.Node("Relu", {"x"}, {"y"});
  b.Output("y", DataType::kFp32, {2});
  Graph g = LoadGraph(b);
  auto changed = ConstantFolding().Run(&g);
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(*changed);
  EXPECT_EQ(CountOps(g, "Relu"), 1);
}

}  // namespace
}  // namespace brigade::engine::onnx
