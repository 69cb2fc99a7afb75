#include "engine/onnx/passes/optimizer.h"

#include "engine/onnx/test_util/graph_runner.h"
#include "gtest/gtest.h"

namespace brigade::engine::onnx {
namespace {

TEST(OptimizerTest, SmallCnnShrinksAndComputesTheSame) {
  // conv → BN → relu → maxpool → flatten → gemm (+ an Identity for good measure)
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {-1, 1, 8, 8});
  b.Initializer("w", RandomTensor({4, 1, 3, 3}, 1));
  Tensor one = RandomTensor({4}, 2);
  for (float& v : one.mutable_values<float>()) v = v * 0.1f + 1.0f;
  b.Initializer("gamma", one);
  b.Initializer("beta", RandomTensor({4}, 3));
  b.Initializer("mean", RandomTensor({4}, 4));
  b.Initializer("var", one);
  b.Initializer("fc", RandomTensor({10, 36}, 5));
  b.Initializer("fc_b", RandomTensor({10}, 6));
  b.Node("Identity", {"x"}, {"xi"});
  b.Node("Conv", {"xi", "w"}, {"c"});
  b.Node("BatchNormalization", {"c", "gamma", "beta", "mean", "var"}, {"bn"});
  b.Node("Relu", {"bn"}, {"r"});
  auto& pool = b.Node("MaxPool", {"r"}, {"p"});
  OnnxBuilder::SetInts(pool, "kernel_shape", {2, 2});
  OnnxBuilder::SetInts(pool, "strides", {2, 2});
  b.Node("Flatten", {"p"}, {"f"});
  OnnxBuilder::SetInt(b.Node("Gemm", {"f", "fc", "fc_b"}, {"y"}), "transB", 1);
  b.Output("y", DataType::kFp32, {-1, 10});
  const Graph original = LoadGraph(b);
  Graph g = original;
  auto report = OptimizeGraph(&g);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->nodes_before, 7u);
  ASSERT_FALSE(report->passes.empty());
  EXPECT_EQ(report->passes.back().nodes_after, 4u);  // FusedConv, MaxPool, Flatten, FusedMatMul
  for (size_t i = 1; i < report->passes.size(); ++i) {
    EXPECT_LE(report->passes[i].nodes_after, report->passes[i - 1].nodes_after);
  }
  const Tensor x = RandomTensor({2, 1, 8, 8}, 7);
  EXPECT_LT(MaxAbsDiff(RunGraph(g, {&x, 1})[0], RunGraph(original, {&x, 1})[0]), 1e-4f);
}

}  // namespace
}  // namespace brigade::engine::onnx
