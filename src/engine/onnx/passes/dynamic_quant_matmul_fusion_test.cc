#include "engine/onnx/passes/dynamic_quant_matmul_fusion.h"

#include <algorithm>
#include <cmath>

#include "engine/onnx/kernels/qlinear_dnnl.h"
#include "engine/onnx/test_util/graph_runner.h"
#include "gtest/gtest.h"

namespace brigade::engine::onnx {
namespace {

// int8 weights [16, 8] with values spread over [-127, 127].
Tensor Int8Weights() {
  std::vector<int8_t> v;
  v.reserve(size_t{16} * 8);
  for (int i = 0; i < 16 * 8; ++i) v.push_back(static_cast<int8_t>((i * 37) % 255 - 127));
  return *Tensor::FromValues<int8_t>(Shape{16, 8}, v);
}

struct Form {
  bool scale_first = false;  // Mul(s, c) instead of Mul(c, s)
  bool bias = true;
  bool per_channel = true;
  bool extra_reader = false;  // the Cast's output also is a graph output
};

// What `brigade optimize quantize --mode dynamic` writes for x [2, 3, 16] · W [16, 8] (+ bias).
OnnxBuilder DynamicLinear(const Form& f) {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {2, 3, 16});
  b.Initializer("w", Int8Weights());
  std::vector<float> scales;
  scales.reserve(8);
  for (int i = 0; i < (f.per_channel ? 8 : 1); ++i) scales.push_back(0.01f + 0.002f * i);
  b.Initializer("w_scale", *Tensor::FromValues<float>(Shape{f.per_channel ? 8 : 1}, scales));
  b.Initializer("bias", RandomTensor({8}, 4));
  b.Node("DynamicQuantizeLinear", {"x"}, {"xq", "xs", "xzp"});
  b.Node("MatMulInteger", {"xq", "w", "xzp"}, {"i32"});
  OnnxBuilder::SetInt(b.Node("Cast", {"i32"}, {"c"}), "to", 1);
  b.Node("Mul", {"xs", "w_scale"}, {"s"});
  b.Node("Mul",
         f.scale_first ? std::vector<std::string>{"s", "c"} : std::vector<std::string>{"c", "s"},
         {f.bias ? "unbiased" : "y"});
  if (f.bias) b.Node("Add", {"unbiased", "bias"}, {"y"});
  b.Output("y", DataType::kFp32, {2, 3, 8});
  if (f.extra_reader) b.Output("c", DataType::kFp32, {2, 3, 8});
  return b;
}

TEST(DynamicQuantMatMulFusionTest, TheQuantizedLinearBecomesOneNodeWithTheSameOutputs) {
  Tensor x = RandomTensor({2, 3, 16}, 2);
  for (float& v : x.mutable_values<float>()) v = 2 * v + 0.7f;  // a non-trivial zero point
  for (const Form& f :
       {Form{}, Form{.scale_first = true}, Form{.bias = false}, Form{.per_channel = false}}) {
    const Graph original = LoadGraph(DynamicLinear(f));
    Graph g = original;
    auto changed = DynamicQuantMatMulFusion().Run(&g);
    ASSERT_TRUE(changed.ok()) << changed.status();
    if (!DnnlInt8IsExact()) {  // the integer loops run instead; nothing to fuse into
      EXPECT_FALSE(*changed);
      continue;
    }
    EXPECT_TRUE(*changed);
    EXPECT_EQ(CountOps(g, "DynamicQuantMatMul"), 1);
    EXPECT_EQ(CountOps(g, "MatMulInteger") + CountOps(g, "Cast") + CountOps(g, "Mul") +
                  CountOps(g, "Add"),
              0);
    EXPECT_EQ(CountOps(g, "DynamicQuantizeLinear"), 1);
    const auto want = RunGraph(original, {&x, 1});
    const auto got = RunGraph(g, {&x, 1});
    ASSERT_EQ(got[0].shape(), want[0].shape());
    // The same s32 sums times the same scales: equal up to fp32 rounding of the two products.
    float scale = 0;
    for (float v : want[0].values<float>()) scale = std::max(scale, std::abs(v));
    ASSERT_GT(scale, 0.1f);
    EXPECT_LT(MaxAbsDiff(got[0], want[0]), 1e-5f * scale);
  }
}

TEST(DynamicQuantMatMulFusionTest, AnIntermediateReadElsewhereStopsTheFusion) {
  Graph g = LoadGraph(DynamicLinear(Form{.extra_reader = true}));
  auto changed = DynamicQuantMatMulFusion().Run(&g);
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(*changed);
  EXPECT_EQ(CountOps(g, "MatMulInteger"), 1);
}

}  // namespace
}  // namespace brigade::engine::onnx
