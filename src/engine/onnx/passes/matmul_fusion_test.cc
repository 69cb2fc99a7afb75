#include "engine/onnx/passes/matmul_fusion.h"

#include "engine/onnx/test_util/graph_runner.h"
#include "gtest/gtest.h"

namespace brigade::engine::onnx {
namespace {

TEST(MatMulFusionTest, MatMulPlusRowBiasBecomesOneFusedMatMul) {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {-1, 8, 16});
  b.Initializer("w", RandomTensor({16, 32}, 1));
  b.Initializer("bias", RandomTensor({32}, 2));
  b.Node("MatMul", {"x", "w"}, {"t"});
  b.Node("Add", {"bias", "t"}, {"y"});  // bias first: operand order must not matter
  b.Output("y", DataType::kFp32, {-1, 8, 32});
  const Graph original = LoadGraph(b);
  Graph g = original;
  auto changed = MatMulFusion().Run(&g);
  ASSERT_TRUE(changed.ok() && *changed);
  ASSERT_EQ(g.nodes().size(), 1u);
  EXPECT_EQ(g.nodes()[0].op_type, "FusedMatMul");
  EXPECT_EQ(g.nodes()[0].inputs.size(), 3u);
  const Tensor x = RandomTensor({2, 8, 16}, 3);
  EXPECT_LT(MaxAbsDiff(RunGraph(g, {&x, 1})[0], RunGraph(original, {&x, 1})[0]), 1e-5f);
}

TEST(MatMulFusionTest, GemmWithConstantCAndAttributesBecomesFusedMatMul) {
  OnnxBuilder b;
  b.Input("a", DataType::kFp32, {5, 4});
  b.Initializer("w", RandomTensor({6, 4}, 4));
  b.Initializer("c", RandomTensor({6}, 5));
  auto& gemm = b.Node("Gemm", {"a", "w", "c"}, {"y"});
  OnnxBuilder::SetInt(gemm, "transB", 1);
  OnnxBuilder::SetFloat(gemm, "alpha", 0.5f);
  OnnxBuilder::SetFloat(gemm, "beta", 2.0f);
  b.Output("y", DataType::kFp32, {5, 6});
  const Graph original = LoadGraph(b);
  Graph g = original;
  ASSERT_TRUE(MatMulFusion().Run(&g).ok());
  EXPECT_EQ(CountOps(g, "Gemm"), 0);
  EXPECT_EQ(CountOps(g, "FusedMatMul"), 1);
  const Tensor a = RandomTensor({5, 4}, 6);
  EXPECT_LT(MaxAbsDiff(RunGraph(g, {&a, 1})[0], RunGraph(original, {&a, 1})[0]), 1e-5f);
}

TEST(MatMulFusionTest, AnAddThatIsNotARowBiasStaysSeparate) {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {4, 3});
  b.Initializer("w", RandomTensor({3, 2}, 7));
  b.Initializer("full", RandomTensor({4, 2}, 8));
  b.Node("MatMul", {"x", "w"}, {"t"});
  b.Node("Add", {"t", "full"}, {"y"});
  b.Output("y", DataType::kFp32, {4, 2});
  Graph g = LoadGraph(b);
  ASSERT_TRUE(MatMulFusion().Run(&g).ok());
  EXPECT_EQ(CountOps(g, "Add"), 1);
  EXPECT_EQ(CountOps(g, "FusedMatMul"), 1);
}

}  // namespace
}  // namespace brigade::engine::onnx
