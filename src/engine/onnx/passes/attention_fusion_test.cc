#include "engine/onnx/passes/attention_fusion.h"

#include "engine/onnx/passes/matmul_fusion.h"
#include "engine/onnx/passes/residual_add_fusion.h"
#include "engine/onnx/test_util/graph_runner.h"
#include "gtest/gtest.h"

namespace brigade::engine::onnx {
namespace {

Tensor Ints(std::vector<int64_t> v) {
  return *Tensor::FromValues<int64_t>(Shape{static_cast<int64_t>(v.size())}, v);
}

// Self-attention core as torch exports it: q, k, v [B, S, H*D] → context [B, S, H*D].
OnnxBuilder Attention() {
  constexpr int64_t kS = 6, kH = 2, kD = 4;
  OnnxBuilder b;
  b.Input("q", DataType::kFp32, {-1, kS, kH * kD});
  b.Input("k", DataType::kFp32, {-1, kS, kH * kD});
  b.Input("v", DataType::kFp32, {-1, kS, kH * kD});
  b.Input("mask", DataType::kFp32, {-1, 1, 1, kS});
  b.Initializer("split", Ints({0, kS, kH, kD}));
  b.Initializer("merge", Ints({0, kS, kH * kD}));
  b.Initializer("scale", *Tensor::FromValues<float>(Shape{}, std::vector<float>{2.0f}));
  for (const char* t : {"q", "k", "v"}) {
    b.Node("Reshape", {t, "split"}, {std::string(t) + "4"});
  }
  OnnxBuilder::SetInts(b.Node("Transpose", {"q4"}, {"qt"}), "perm", {0, 2, 1, 3});
  OnnxBuilder::SetInts(b.Node("Transpose", {"k4"}, {"kt"}), "perm", {0, 2, 3, 1});
  OnnxBuilder::SetInts(b.Node("Transpose", {"v4"}, {"vt"}), "perm", {0, 2, 1, 3});
  b.Node("MatMul", {"qt", "kt"}, {"scores"});
  b.Node("Div", {"scores", "scale"}, {"scaled"});
  b.Node("Add", {"scaled", "mask"}, {"masked"});
  OnnxBuilder::SetInt(b.Node("Softmax", {"masked"}, {"probs"}), "axis", -1);
  b.Node("MatMul", {"probs", "vt"}, {"ctx"});
  OnnxBuilder::SetInts(b.Node("Transpose", {"ctx"}, {"ctx_t"}), "perm", {0, 2, 1, 3});
  b.Node("Reshape", {"ctx_t", "merge"}, {"y"});
  b.Output("y", DataType::kFp32, {-1, kS, kH * kD});
  return b;
}

TEST(AttentionFusionTest, TransposesAndScaleFoldIntoTheBatchedMatMuls) {
  const Graph original = LoadGraph(Attention());
  Graph g = original;
  ASSERT_TRUE(MatMulFusion().Run(&g).ok());
  auto changed = AttentionFusion().Run(&g);
  ASSERT_TRUE(changed.ok() && *changed);
  ASSERT_TRUE(ResidualAddFusion().Run(&g).ok());
  EXPECT_EQ(CountOps(g, "Transpose"), 0);
  EXPECT_EQ(CountOps(g, "Div"), 0);
  EXPECT_EQ(CountOps(g, "Add"), 0);
  EXPECT_EQ(CountOps(g, "FusedMatMul"), 2);
  EXPECT_EQ(CountOps(g, "Softmax"), 1);
  for (int64_t batch : {1, 3}) {
    Tensor mask = *Tensor::Zeros(DataType::kFp32, Shape{batch, 1, 1, 6});
    mask.mutable_values<float>()[5] = -10000.0f;
    const Tensor in[] = {RandomTensor({batch, 6, 8}, 1), RandomTensor({batch, 6, 8}, 2),
                         RandomTensor({batch, 6, 8}, 3), mask};
    EXPECT_LT(MaxAbsDiff(RunGraph(g, in)[0], RunGraph(original, in)[0]), 1e-5f) << batch;
  }
}

// ConvNeXt's block tail: a Linear on channels-last [N, H, W, C], then the Transpose back to
// NCHW. Folded into perm_out, the matmul would write its last axis with a stride of H·W, which
// oneDNN 2.6 runs only on its reference kernel (7.3 s for one of ConvNeXt-Tiny's 3136×384×96
// matmuls); a standalone Transpose is a fast reorder.
TEST(AttentionFusionTest, OutputTransposeMovingTheLastAxisStaysStandalone) {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {-1, 3, 5, 8});
  b.Initializer("w", RandomTensor({8, 6}, 4));
  b.Initializer("bias", RandomTensor({6}, 5));
  b.Node("MatMul", {"x", "w"}, {"mm"});
  b.Node("Add", {"mm", "bias"}, {"linear"});
  OnnxBuilder::SetInts(b.Node("Transpose", {"linear"}, {"y"}), "perm", {0, 3, 1, 2});
  b.Output("y", DataType::kFp32, {-1, 6, 3, 5});
  const Graph original = LoadGraph(b);
  Graph g = original;
  ASSERT_TRUE(MatMulFusion().Run(&g).ok());
  ASSERT_TRUE(AttentionFusion().Run(&g).ok());
  EXPECT_EQ(CountOps(g, "Transpose"), 1);
  for (const Node& node : g.nodes()) {
    if (node.op_type == "FusedMatMul") {
      EXPECT_FALSE(node.attributes.Has("perm_out"));
    }
  }
  const Tensor in[] = {RandomTensor({2, 3, 5, 8}, 6)};
  EXPECT_LT(MaxAbsDiff(RunGraph(g, in)[0], RunGraph(original, in)[0]), 1e-5f);
}

// The same rule for an operand: a Transpose that takes A's contiguous axis out of the last two
// leaves no unit stride for oneDNN's GEMM, so it stays standalone; one that keeps it there
// (attention's [0, 2, 3, 1] on K) folds.
TEST(AttentionFusionTest, InputTransposeFoldsOnlyWhenTheContiguousAxisStaysInTheLastTwo) {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {-1, 3, 5, 8});
  b.Input("k", DataType::kFp32, {-1, 4, 8, 5});
  OnnxBuilder::SetInts(b.Node("Transpose", {"x"}, {"xt"}), "perm", {0, 3, 1, 2});
  OnnxBuilder::SetInts(b.Node("Transpose", {"k"}, {"kt"}), "perm", {0, 2, 3, 1});
  b.Node("MatMul", {"xt", "kt"}, {"y"});
  b.Output("y", DataType::kFp32, {-1, 8, 3, 4});
  const Graph original = LoadGraph(b);
  Graph g = original;
  ASSERT_TRUE(MatMulFusion().Run(&g).ok());
  ASSERT_TRUE(AttentionFusion().Run(&g).ok());
  EXPECT_EQ(CountOps(g, "Transpose"), 1);
  for (const Node& node : g.nodes()) {
    if (node.op_type != "FusedMatMul") continue;
    EXPECT_FALSE(node.attributes.Has("perm_a"));
    EXPECT_TRUE(node.attributes.Has("perm_b"));
  }
  const Tensor in[] = {RandomTensor({2, 3, 5, 8}, 7), RandomTensor({2, 4, 8, 5}, 8)};
  EXPECT_LT(MaxAbsDiff(RunGraph(g, in)[0], RunGraph(original, in)[0]), 1e-5f);
}

}  // namespace
}  // namespace brigade::engine::onnx
