// Add / Mul of a convolution's blocked output by a per-channel operand, on the blocked layout:
// against the same arithmetic done on the convolution's plain output, for a constant [C, 1, 1]
// scale, a scalar, and a squeeze-and-excitation gate ([N, C, 1, 1], itself a blocked 1×1
// convolution's output), channels not a multiple of the block, batch 2 and two threads.

#include <cmath>
#include <string>
#include <vector>

#include "engine/onnx/test_util/graph_runner.h"
#include "gtest/gtest.h"

namespace brigade::engine::onnx {
namespace {

constexpr int64_t kChannels = 20;  // nChw16c with the second block partly padding

// x [2, 3, 5, 5] → Conv (20 channels) → "c"; what the tests add after it.
OnnxBuilder ConvGraph() {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {2, 3, 5, 5});
  b.Initializer("w", RandomTensor({kChannels, 3, 1, 1}, 31));
  b.Node("Conv", {"x", "w"}, {"c"});
  return b;
}

// The convolution's output, computed alone (plain, a graph output).
Tensor ConvOutput(const Tensor& x) {
  OnnxBuilder b = ConvGraph();
  b.Output("c", DataType::kFp32, {2, kChannels, 5, 5});
  return RunGraph(LoadGraph(b), {&x, 1})[0];
}

// c ∘ operand per element, operand indexed by (batch, channel) through `at`.
template <typename At>
Tensor Expected(const Tensor& c, bool multiply, At at) {
  std::vector<float> out;
  const auto v = c.values<float>();
  for (size_t i = 0; i < v.size(); ++i) {
    const auto n = static_cast<int64_t>(i / (kChannels * 25));
    const auto ch = static_cast<int64_t>(i / 25 % kChannels);
    out.push_back(multiply ? v[i] * at(n, ch) : v[i] + at(n, ch));
  }
  return *Tensor::FromValues<float>(c.shape(), out);
}

TEST(ChannelBroadcastTest, AConstantPerChannelScaleOrBiasMatchesThePlainArithmetic) {
  const Tensor x = RandomTensor({2, 3, 5, 5}, 32);
  const Tensor c = ConvOutput(x);
  const Tensor s = RandomTensor({kChannels, 1, 1}, 33);
  for (const char* op : {"Mul", "Add"}) {
    for (bool operand_first : {false, true}) {
      OnnxBuilder b = ConvGraph();
      b.Initializer("s", s);
      b.Node(
          op,
          operand_first ? std::vector<std::string>{"s", "c"} : std::vector<std::string>{"c", "s"},
          {"y"});
      b.Output("y", DataType::kFp32, {2, kChannels, 5, 5});
      const Tensor want = Expected(c, std::string(op) == "Mul",
                                   [&](int64_t, int64_t ch) { return s.values<float>()[ch]; });
      for (int threads : {1, 2}) {
        EXPECT_LT(MaxAbsDiff(RunGraph(LoadGraph(b), {&x, 1}, threads)[0], want), 1e-6f)
            << op << " operand first " << operand_first << ", " << threads << " threads";
      }
    }
  }
}

TEST(ChannelBroadcastTest, AScalarOperandMatchesThePlainArithmetic) {
  const Tensor x = RandomTensor({2, 3, 5, 5}, 34);
  const Tensor c = ConvOutput(x);
  OnnxBuilder b = ConvGraph();
  b.Initializer("k", *Tensor::FromValues<float>(Shape{}, std::vector<float>{0.25f}));
  b.Node("Add", {"c", "k"}, {"y"});
  b.Output("y", DataType::kFp32, {2, kChannels, 5, 5});
  const Tensor want = Expected(c, false, [](int64_t, int64_t) { return 0.25f; });
  EXPECT_LT(MaxAbsDiff(RunGraph(LoadGraph(b), {&x, 1})[0], want), 1e-6f);
}

TEST(ChannelBroadcastTest, ASqueezeAndExcitationGateMatchesThePlainArithmetic) {
  // c · Sigmoid(Conv1x1(GlobalAveragePool(c))): the gate is [2, 20, 1, 1], per batch.
  const Tensor x = RandomTensor({2, 3, 5, 5}, 35);
  const Tensor c = ConvOutput(x);
  const Tensor w2 = RandomTensor({kChannels, kChannels, 1, 1}, 36);
  OnnxBuilder b = ConvGraph();
  b.Initializer("w2", w2);
  b.Node("GlobalAveragePool", {"c"}, {"p"});
  b.Node("Conv", {"p", "w2"}, {"q"});
  b.Node("Sigmoid", {"q"}, {"g"});
  b.Node("Mul", {"c", "g"}, {"y"});
  b.Output("y", DataType::kFp32, {2, kChannels, 5, 5});
  // The gate, in double from the plain output.
  std::vector<double> gate(2 * kChannels);
  const auto cv = c.values<float>();
  const auto wv = w2.values<float>();
  for (int64_t n = 0; n < 2; ++n) {
    std::vector<double> pooled(kChannels);
    for (int64_t ch = 0; ch < kChannels; ++ch) {
      for (int64_t i = 0; i < 25; ++i) pooled[ch] += cv[(n * kChannels + ch) * 25 + i] / 25.0;
    }
    for (int64_t o = 0; o < kChannels; ++o) {
      double q = 0;
      for (int64_t ch = 0; ch < kChannels; ++ch) q += wv[o * kChannels + ch] * pooled[ch];
      gate[n * kChannels + o] = 1 / (1 + std::exp(-q));
    }
  }
  const Tensor want = Expected(
      c, true, [&](int64_t n, int64_t ch) { return static_cast<float>(gate[n * kChannels + ch]); });
  for (int threads : {1, 2}) {
    EXPECT_LT(MaxAbsDiff(RunGraph(LoadGraph(b), {&x, 1}, threads)[0], want), 1e-5f) << threads;
  }
}

}  // namespace
}  // namespace brigade::engine::onnx
