#include "engine/onnx/passes/layernorm_fusion.h"

#include "engine/onnx/test_util/graph_runner.h"
#include "gtest/gtest.h"

namespace brigade::engine::onnx {
namespace {

Tensor Scalar(float v) { return *Tensor::FromValues<float>(Shape{}, std::vector<float>{v}); }

// The decomposition torch.onnx emits for nn.LayerNorm below opset 17.
OnnxBuilder DecomposedLayerNorm() {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {-1, 5, 16});
  b.Initializer("two", Scalar(2.0f));
  b.Initializer("eps", Scalar(1e-5f));
  b.Initializer("gamma", RandomTensor({16}, 1));
  b.Initializer("beta", RandomTensor({16}, 2));
  OnnxBuilder::SetInts(b.Node("ReduceMean", {"x"}, {"mean"}), "axes", {-1});
  b.Node("Sub", {"x", "mean"}, {"d"});
  b.Node("Pow", {"d", "two"}, {"sq"});
  OnnxBuilder::SetInts(b.Node("ReduceMean", {"sq"}, {"var"}), "axes", {-1});
  b.Node("Add", {"var", "eps"}, {"ve"});
  b.Node("Sqrt", {"ve"}, {"std"});
  b.Node("Div", {"d", "std"}, {"n"});
  b.Node("Mul", {"n", "gamma"}, {"g"});
  b.Node("Add", {"g", "beta"}, {"y"});
  b.Output("y", DataType::kFp32, {-1, 5, 16});
  return b;
}

TEST(LayerNormFusionTest, NineNodesBecomeOneLayerNormalization) {
  const Graph original = LoadGraph(DecomposedLayerNorm());
  ASSERT_EQ(original.nodes().size(), 9u);
  Graph g = original;
  auto changed = LayerNormFusion().Run(&g);
  ASSERT_TRUE(changed.ok() && *changed);
  ASSERT_EQ(g.nodes().size(), 1u);
  EXPECT_EQ(g.nodes()[0].op_type, "LayerNormalization");
  EXPECT_FLOAT_EQ(g.nodes()[0].attributes.GetFloat("epsilon", 0), 1e-5f);
  const Tensor x = RandomTensor({3, 5, 16}, 3);
  EXPECT_LT(MaxAbsDiff(RunGraph(g, {&x, 1})[0], RunGraph(original, {&x, 1})[0]), 1e-5f);
}

TEST(LayerNormFusionTest, AnIntermediateReadOutsideThePatternBlocksTheFusion) {
  OnnxBuilder b = DecomposedLayerNorm();
  b.Output("mean", DataType::kFp32, {-1, 5, 1});
  Graph g = LoadGraph(b);
  auto changed = LayerNormFusion().Run(&g);
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(*changed);
}

}  // namespace
}  // namespace brigade::engine::onnx
