#include "engine/onnx/passes/constant_folding.h"

#include <array>

#include "engine/onnx/passes/pass_util.h"
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

// A model file's shapes are untrusted: a 1-element ConstantOfShape may ask for gigabytes, and
// folding must refuse it from the kernel's description, before allocating (the fuzzer found a
// model whose fold asked for 32 GiB).
TEST(ConstantFoldingTest, EvaluateNodeRefusesResultsOverTheLimitBeforeAllocating) {
  OnnxBuilder b;
  const std::array<int64_t, 2> dims = {1024, 1024};
  b.Initializer("shape", *Tensor::FromValues<int64_t>(Shape{2}, dims));
  b.Node("ConstantOfShape", {"shape"}, {"y"});
  b.Output("y", DataType::kFp32, {1024, 1024});
  const Graph g = LoadGraph(b);
  const Node* node = nullptr;
  for (const Node& n : g.nodes()) {
    if (n.op_type == "ConstantOfShape") node = &n;
  }
  ASSERT_NE(node, nullptr);
  const auto refused = EvaluateNode(g, *node, /*max_bytes=*/(size_t{4} << 20) - 1);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted) << refused.status();
  const auto evaluated = EvaluateNode(g, *node, /*max_bytes=*/size_t{4} << 20);
  ASSERT_TRUE(evaluated.ok()) << evaluated.status();
  EXPECT_EQ((*evaluated)[0].byte_size(), size_t{4} << 20);
}

TEST(ConstantFoldingTest, LeavesResultsOverTheFoldLimitToRunTime) {
  OnnxBuilder b;
  // 2^31 floats: 8 GiB, over kMaxFoldedBytes and more than a test machine should ever touch.
  const std::array<int64_t, 1> dims = {int64_t{1} << 31};
  b.Initializer("shape", *Tensor::FromValues<int64_t>(Shape{1}, dims));
  b.Node("ConstantOfShape", {"shape"}, {"y"});
  b.Output("y", DataType::kFp32, {-1});
  Graph g = LoadGraph(b);
  auto changed = ConstantFolding().Run(&g);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_EQ(CountOps(g, "ConstantOfShape"), 1);
}

}  // namespace
}  // namespace brigade::engine::onnx
