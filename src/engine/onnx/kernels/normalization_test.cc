// BatchNormalization's scale-shift pass against its definition, y = scale·(x − mean)/√(var + ε) + B
// computed per element in double: on plain inputs of several ranks, on the nChw16c layout a
// convolution leaves (channels not a multiple of the block), with the ReLU ActivationFusion folds
// in, and on two threads.

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "engine/onnx/passes/activation_fusion.h"
#include "engine/onnx/test_util/graph_runner.h"
#include "gtest/gtest.h"

namespace brigade::engine::onnx {
namespace {

// Statistics for `c` channels: positive variances, scales of both signs.
struct Stats {
  Tensor scale, bias, mean, var;
  explicit Stats(int64_t c)
      : scale(RandomTensor({c}, 21)),
        bias(RandomTensor({c}, 22)),
        mean(RandomTensor({c}, 23)),
        var(Ramp({c}, 0.5f, 0.25f)) {}
  void AddTo(OnnxBuilder& b) const {
    b.Initializer("scale", scale);
    b.Initializer("bias", bias);
    b.Initializer("mean", mean);
    b.Initializer("var", var);
  }
};

// The definition, channel axis 1, in double; then ReLU when asked.
Tensor Reference(const Tensor& x, const Stats& s, float epsilon, bool relu) {
  const Shape& shape = x.shape();
  const int64_t c = shape[1];
  int64_t inner = 1;
  for (size_t d = 2; d < shape.size(); ++d) inner *= shape[d];
  const auto in = x.values<float>();
  std::vector<float> out(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const auto ch = static_cast<size_t>((static_cast<int64_t>(i) / inner) % c);
    double v = s.scale.values<float>()[ch] * (in[i] - s.mean.values<float>()[ch]) /
                   std::sqrt(static_cast<double>(s.var.values<float>()[ch]) + epsilon) +
               s.bias.values<float>()[ch];
    if (relu) v = std::max(v, 0.0);
    out[i] = static_cast<float>(v);
  }
  return *Tensor::FromValues<float>(shape, out);
}

void AddBatchNorm(OnnxBuilder& b, const std::string& input, const std::string& output,
                  float epsilon) {
  auto& bn = b.Node("BatchNormalization", {input, "scale", "bias", "mean", "var"}, {output});
  OnnxBuilder::SetFloat(bn, "epsilon", epsilon);
}

TEST(BatchNormKernelTest, PlainInputsOfEveryRankMatchTheDefinition) {
  for (const std::vector<int64_t>& shape :
       std::vector<std::vector<int64_t>>{{3, 5}, {2, 5, 7}, {2, 5, 4, 3}, {1, 5, 2, 3, 2}}) {
    const Stats s(5);
    OnnxBuilder b;
    b.Input("x", DataType::kFp32, shape);
    s.AddTo(b);
    AddBatchNorm(b, "x", "y", 1e-3f);
    b.Output("y", DataType::kFp32, shape);
    const Tensor x = RandomTensor(shape, 24);
    EXPECT_LT(MaxAbsDiff(RunGraph(LoadGraph(b), {&x, 1})[0], Reference(x, s, 1e-3f, false)), 1e-5f)
        << ShapeToString(Shape(shape.begin(), shape.end()));
  }
}

TEST(BatchNormKernelTest, AFusedReluOnABlockedConvolutionOutputMatchesTheDefinition) {
  // 20 channels from a convolution: nChw16c with the second block half padding.
  const Tensor x = RandomTensor({1, 3, 12, 12}, 25);
  const Tensor w = RandomTensor({20, 3, 1, 1}, 26);
  OnnxBuilder plain;
  plain.Input("x", DataType::kFp32, {1, 3, 12, 12});
  plain.Initializer("w", w);
  plain.Node("Conv", {"x", "w"}, {"c"});
  plain.Output("c", DataType::kFp32, {1, 20, 12, 12});
  const Tensor conv = RunGraph(LoadGraph(plain), {&x, 1})[0];

  const Stats s(20);
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {1, 3, 12, 12});
  b.Initializer("w", w);
  s.AddTo(b);
  b.Node("Conv", {"x", "w"}, {"c"});
  AddBatchNorm(b, "c", "n", 1e-5f);
  b.Node("Relu", {"n"}, {"y"});
  b.Output("y", DataType::kFp32, {1, 20, 12, 12});
  Graph g = LoadGraph(b);
  ASSERT_TRUE(ActivationFusion().Run(&g).ok());
  EXPECT_EQ(CountOps(g, "FusedBatchNorm"), 1);
  EXPECT_EQ(CountOps(g, "Relu"), 0);
  for (int threads : {1, 2}) {
    EXPECT_LT(MaxAbsDiff(RunGraph(g, {&x, 1}, threads)[0], Reference(conv, s, 1e-5f, true)), 1e-5f)
        << threads << " threads";
  }
}

TEST(BatchNormKernelTest, TwoThreadsOnALargeInputMatchTheDefinition) {
  const Stats s(16);
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {2, 16, 32, 32});
  s.AddTo(b);
  AddBatchNorm(b, "x", "y", 1e-5f);
  b.Output("y", DataType::kFp32, {2, 16, 32, 32});
  const Tensor x = RandomTensor({2, 16, 32, 32}, 27);
  EXPECT_LT(MaxAbsDiff(RunGraph(LoadGraph(b), {&x, 1}, 2)[0], Reference(x, s, 1e-5f, false)),
            1e-5f);
}

}  // namespace
}  // namespace brigade::engine::onnx
