#include "engine/onnx/passes/shape_folding.h"

#include "engine/onnx/passes/constant_folding.h"
#include "engine/onnx/test_util/graph_runner.h"
#include "gtest/gtest.h"

namespace brigade::engine::onnx {
namespace {

Tensor Ints(std::vector<int64_t> v) {
  return *Tensor::FromValues<int64_t>(Shape{static_cast<int64_t>(v.size())}, v);
}

// y = Reshape(x, Concat(Shape(x)[0], Shape(x)[1] * Shape(x)[2])) with x [-1, 4, 5].
OnnxBuilder FlattenBySlices() {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {-1, 4, 5});
  b.Initializer("i0", Ints({0}));
  b.Initializer("i1", Ints({1}));
  b.Initializer("i2", Ints({2}));
  b.Node("Shape", {"x"}, {"s"});
  OnnxBuilder::SetInt(b.Node("Gather", {"s", "i0"}, {"n"}), "axis", 0);
  OnnxBuilder::SetInt(b.Node("Gather", {"s", "i1"}, {"h"}), "axis", 0);
  OnnxBuilder::SetInt(b.Node("Gather", {"s", "i2"}, {"w"}), "axis", 0);
  b.Node("Mul", {"h", "w"}, {"hw"});
  OnnxBuilder::SetInt(b.Node("Concat", {"n", "hw"}, {"target"}), "axis", 0);
  b.Node("Reshape", {"x", "target"}, {"y"});
  b.Output("y", DataType::kFp32, {-1, 20});
  return b;
}

TEST(ShapeFoldingTest, FoldsGathersOfStaticDimsAndLeavesTheBatch) {
  const Graph original = LoadGraph(FlattenBySlices());
  Graph g = original;
  auto changed = ShapeFolding().Run(&g);
  ASSERT_TRUE(changed.ok() && *changed);
  ASSERT_TRUE(ConstantFolding().Run(&g).ok());
  // Gather(1), Gather(2) and the Mul became constants; Shape → Gather(0) → Concat remain.
  EXPECT_EQ(CountOps(g, "Gather"), 1);
  EXPECT_EQ(CountOps(g, "Mul"), 0);
  EXPECT_EQ(CountOps(g, "Shape"), 1);
  for (int64_t batch : {1, 3}) {
    const Tensor x = RandomTensor({batch, 4, 5}, 3);
    const auto got = RunGraph(g, {&x, 1});
    ASSERT_EQ(got[0].shape(), (Shape{batch, 20}));
    EXPECT_EQ(MaxAbsDiff(got[0], RunGraph(original, {&x, 1})[0]), 0.0f);
  }
}

TEST(ShapeFoldingTest, FoldsWholeShapeAndSizeOfStaticInputs) {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {2, 6});
  b.Node("Shape", {"x"}, {"s"});
  b.Node("Size", {"x"}, {"n"});
  b.Output("s", DataType::kInt64, {2});
  b.Output("n", DataType::kInt64, {});
  Graph g = LoadGraph(b);
  ASSERT_TRUE(ShapeFolding().Run(&g).ok());
  EXPECT_TRUE(g.nodes().empty());
  const Tensor* s = &*g.value(g.outputs()[0]).constant;
  EXPECT_EQ(s->values<int64_t>()[1], 6);
  EXPECT_EQ(g.value(g.outputs()[1]).constant->values<int64_t>()[0], 12);
}

}  // namespace
}  // namespace brigade::engine::onnx
