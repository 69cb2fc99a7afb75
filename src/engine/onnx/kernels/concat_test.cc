// Concat of convolutions' nChw16c outputs along the channels stays blocked (the same byte ranges
// per batch row as the plain layout): it must equal the plain concatenation, and an axis other
// than the channels, or channel counts off the block, must still be right (they reorder).

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "engine/onnx/test_util/graph_runner.h"
#include "gtest/gtest.h"

namespace brigade::engine::onnx {
namespace {

// x [2, 3, 4, 4] → Conv a (`ca` channels) and Conv b (`cb` channels) → Concat(axis) → Relu → y,
// or with `concat` false the two convolutions' outputs themselves.
OnnxBuilder TwoConvs(int64_t ca, int64_t cb, int64_t axis, bool concat) {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {2, 3, 4, 4});
  b.Initializer("wa", RandomTensor({ca, 3, 1, 1}, 41));
  b.Initializer("wb", RandomTensor({cb, 3, 1, 1}, 42));
  b.Node("Conv", {"x", "wa"}, {"a"});
  b.Node("Conv", {"x", "wb"}, {"b"});
  if (!concat) {
    b.Output("a", DataType::kFp32, {2, ca, 4, 4});
    b.Output("b", DataType::kFp32, {2, cb, 4, 4});
    return b;
  }
  OnnxBuilder::SetInt(b.Node("Concat", {"a", "b", "a"}, {"c"}), "axis", axis);
  b.Node("Relu", {"c"}, {"y"});
  std::vector<int64_t> shape{2, ca, 4, 4};
  shape[static_cast<size_t>(axis)] = axis == 1 ? 2 * ca + cb : 3 * shape[static_cast<size_t>(axis)];
  b.Output("y", DataType::kFp32, shape);
  return b;
}

// relu(concat(a, b, a)) along `axis`, from plain tensors.
Tensor Expected(const Tensor& a, const Tensor& b, int64_t axis) {
  const std::vector<const Tensor*> parts{&a, &b, &a};
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= a.shape()[static_cast<size_t>(d)];
  std::vector<float> out;
  Shape shape = a.shape();
  shape[static_cast<size_t>(axis)] = 0;
  for (const Tensor* t : parts) shape[static_cast<size_t>(axis)] += t->shape()[axis];
  for (int64_t o = 0; o < outer; ++o) {
    for (const Tensor* t : parts) {
      const auto v = t->values<float>();
      const auto row = static_cast<int64_t>(v.size()) / outer;
      for (int64_t i = 0; i < row; ++i) out.push_back(std::max(v[o * row + i], 0.0f));
    }
  }
  return *Tensor::FromValues<float>(shape, out);
}

TEST(ConcatKernelTest, BlockedChannelConcatenationsEqualThePlainOne) {
  const Tensor x = RandomTensor({2, 3, 4, 4}, 43);
  // 16 + 32 (blocks, stays nChw16c); 16 + 20 (20 is padded: reorders); axis 0 and 2 (reorder).
  for (auto [ca, cb, axis] :
       {std::tuple<int64_t, int64_t, int64_t>{16, 32, 1}, {16, 20, 1}, {16, 16, 0}, {16, 16, 2}}) {
    const std::vector<Tensor> convs = RunGraph(LoadGraph(TwoConvs(ca, cb, axis, false)), {&x, 1});
    const Tensor got = RunGraph(LoadGraph(TwoConvs(ca, cb, axis, true)), {&x, 1})[0];
    EXPECT_EQ(MaxAbsDiff(got, Expected(convs[0], convs[1], axis)), 0.0f)
        << ca << " + " << cb << " on axis " << axis;
  }
}

}  // namespace
}  // namespace brigade::engine::onnx
