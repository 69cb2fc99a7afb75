#include "engine/onnx/passes/batchnorm_folding.h"

#include "engine/onnx/test_util/graph_runner.h"
#include "gtest/gtest.h"

namespace brigade::engine::onnx {
namespace {

Tensor Positive(std::vector<int64_t> shape, uint32_t seed) {
  Tensor t = RandomTensor(shape, seed);
  for (float& v : t.mutable_values<float>()) v = v * 0.5f + 1.0f;
  return t;
}

OnnxBuilder ConvBatchNorm(bool with_bias) {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {-1, 3, 8, 8});
  b.Initializer("w", RandomTensor({4, 3, 3, 3}, 11));
  if (with_bias) b.Initializer("b", RandomTensor({4}, 12));
  b.Initializer("gamma", Positive({4}, 13));
  b.Initializer("beta", RandomTensor({4}, 14));
  b.Initializer("mean", RandomTensor({4}, 15));
  b.Initializer("var", Positive({4}, 16));
  auto& conv = b.Node(
      "Conv",
      with_bias ? std::vector<std::string>{"x", "w", "b"} : std::vector<std::string>{"x", "w"},
      {"c"});
  OnnxBuilder::SetInts(conv, "pads", {1, 1, 1, 1});
  OnnxBuilder::SetFloat(b.Node("BatchNormalization", {"c", "gamma", "beta", "mean", "var"}, {"y"}),
                        "epsilon", 1e-3f);
  b.Output("y", DataType::kFp32, {-1, 4, 8, 8});
  return b;
}

TEST(BatchNormFoldingTest, FoldsIntoTheConvWithAndWithoutBias) {
  for (bool with_bias : {false, true}) {
    const Graph original = LoadGraph(ConvBatchNorm(with_bias));
    Graph g = original;
    auto changed = BatchNormFolding().Run(&g);
    ASSERT_TRUE(changed.ok() && *changed);
    EXPECT_EQ(CountOps(g, "BatchNormalization"), 0);
    ASSERT_EQ(CountOps(g, "Conv"), 1);
    const Tensor x = RandomTensor({2, 3, 8, 8}, 17);
    EXPECT_LT(MaxAbsDiff(RunGraph(g, {&x, 1})[0], RunGraph(original, {&x, 1})[0]), 1e-4f);
  }
}

TEST(BatchNormFoldingTest, LeavesABatchNormWhoseConvOutputIsAlsoReadElsewhere) {
  OnnxBuilder b = ConvBatchNorm(false);
  b.Node("Relu", {"c"}, {"side"});
  b.Output("side", DataType::kFp32, {-1, 4, 8, 8});
  Graph g = LoadGraph(b);
  auto changed = BatchNormFolding().Run(&g);
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(*changed);
  EXPECT_EQ(CountOps(g, "BatchNormalization"), 1);
}

}  // namespace
}  // namespace brigade::engine::onnx
