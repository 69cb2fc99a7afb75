#include "engine/onnx/passes/static_shapes.h"

#include "engine/onnx/test_util/graph_runner.h"
#include "gtest/gtest.h"

namespace brigade::engine::onnx {
namespace {

Tensor Ints(std::vector<int64_t> v) {
  return *Tensor::FromValues<int64_t>(Shape{static_cast<int64_t>(v.size())}, v);
}

TEST(StaticShapesTest, ShapesAfterAComputedReshapeBecomeKnownExceptTheBatch) {
  // y = Transpose(Reshape(x, [Shape(x)[0], 4, 2, 3])) with x [-1, 4, 6].
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {-1, 4, 6});
  b.Initializer("i0", Ints({0}));
  b.Initializer("tail", Ints({4, 2, 3}));
  b.Node("Shape", {"x"}, {"s"});
  OnnxBuilder::SetInt(b.Node("Gather", {"s", "i0"}, {"n"}), "axis", 0);
  OnnxBuilder::SetInt(b.Node("Concat", {"n", "tail"}, {"target"}), "axis", 0);
  b.Node("Reshape", {"x", "target"}, {"r"});
  OnnxBuilder::SetInts(b.Node("Transpose", {"r"}, {"y"}), "perm", {0, 2, 1, 3});
  b.Output("y", DataType::kFp32, {-1, -1, -1, -1});
  Graph g = LoadGraph(b);
  auto changed = StaticShapes().Run(&g);
  ASSERT_TRUE(changed.ok() && *changed);
  EXPECT_EQ(*g.value(g.FindValue("r")).shape, (Shape{-1, 4, 2, 3}));
  EXPECT_EQ(*g.value(g.FindValue("y")).shape, (Shape{-1, 2, 4, 3}));
}

TEST(StaticShapesTest, ContentDependentShapesLeaveTheGraphUnchanged) {
  // The Reshape target is a graph input: zero probes cannot be reshaped, so nothing changes.
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {6});
  b.Input("shape", DataType::kInt64, {2});
  b.Node("Reshape", {"x", "shape"}, {"y"});
  b.Output("y", DataType::kFp32, {-1, -1});
  Graph g = LoadGraph(b);
  auto changed = StaticShapes().Run(&g);
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(*changed);
}

TEST(StaticShapesTest, InputsDeclaredHugeAreNotProbed) {
  // A model file declares the shapes: 2^30 x 4 floats (16 GiB) must not be allocated to probe.
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {int64_t{1} << 30, 4});
  b.Node("Shape", {"x"}, {"s"});
  b.Node("Relu", {"x"}, {"y"});
  b.Output("y", DataType::kFp32, {-1, -1});
  Graph g = LoadGraph(b);
  auto changed = StaticShapes().Run(&g);
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(*changed);
}

}  // namespace
}  // namespace brigade::engine::onnx
