// CumSum and Trilu beyond the ONNX node tests (1-D/2-D CumSum, single matrices): an axis in the
// middle of a 3-D tensor with exclusive + reverse, the axis as a graph input (a value input, so
// it joins the plan key and each value gets its own plan), and Trilu over a batch of matrices
// with k far outside the matrix, where i + k would overflow.

#include <cstdint>
#include <limits>
#include <vector>

#include "engine/onnx/test_util/graph_runner.h"
#include "gtest/gtest.h"

namespace brigade::engine::onnx {
namespace {

std::vector<float> Values(const Tensor& t) {
  return std::vector<float>(t.values<float>().begin(), t.values<float>().end());
}

TEST(CumSumKernelTest, MiddleAxisExclusiveReverseFromAGraphInputAxis) {
  OnnxBuilder b(14);
  b.Input("x", DataType::kFp32, {2, 3, 2});
  b.Input("axis", DataType::kInt64, {});
  auto& node = b.Node("CumSum", {"x", "axis"}, {"y"});
  OnnxBuilder::SetInt(node, "exclusive", 1);
  OnnxBuilder::SetInt(node, "reverse", 1);
  b.Output("y", DataType::kFp32, {2, 3, 2});
  const Tensor x = Ramp({2, 3, 2});  // x[o][s][i] = 6o + 2s + i
  for (int64_t axis : {1, -2}) {
    const std::vector<Tensor> inputs{
        x, *Tensor::FromValues<int64_t>(Shape{}, std::vector<int64_t>{axis})};
    const std::vector<Tensor> out = RunGraph(LoadGraph(b), inputs);
    ASSERT_EQ(out.size(), 1u);
    // y[o][s] = sum of x[o][t] for t > s.
    EXPECT_EQ(Values(out[0]), (std::vector<float>{6, 8, 4, 5, 0, 0, 18, 20, 10, 11, 0, 0})) << axis;
  }
  // Another axis value is another plan.
  const std::vector<Tensor> inputs{x,
                                   *Tensor::FromValues<int64_t>(Shape{}, std::vector<int64_t>{2})};
  const std::vector<Tensor> out = RunGraph(LoadGraph(b), inputs);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Values(out[0]), (std::vector<float>{1, 0, 3, 0, 5, 0, 7, 0, 9, 0, 11, 0}));
}

TEST(CumSumKernelTest, Int64Inclusive) {
  OnnxBuilder b(14);
  b.Input("x", DataType::kInt64, {2, 3});
  b.Initializer("axis", *Tensor::FromValues<int32_t>(Shape{}, std::vector<int32_t>{1}));
  b.Node("CumSum", {"x", "axis"}, {"y"});
  b.Output("y", DataType::kInt64, {2, 3});
  const std::vector<Tensor> inputs{*Tensor::FromValues<int64_t>(
      Shape{2, 3}, std::vector<int64_t>{1, 2, 3, int64_t{1} << 40, 5, 6})};
  const std::vector<Tensor> out = RunGraph(LoadGraph(b), inputs);
  ASSERT_EQ(out.size(), 1u);
  const std::vector<int64_t> got(out[0].values<int64_t>().begin(), out[0].values<int64_t>().end());
  EXPECT_EQ(got, (std::vector<int64_t>{1, 3, 6, int64_t{1} << 40, (int64_t{1} << 40) + 5,
                                       (int64_t{1} << 40) + 11}));
}

// Trilu of x [2, 3, 4] with k from a graph input.
std::vector<float> Trilu(bool upper, int64_t k) {
  OnnxBuilder b(14);
  b.Input("x", DataType::kFp32, {2, 3, 4});
  b.Input("k", DataType::kInt64, {});
  OnnxBuilder::SetInt(b.Node("Trilu", {"x", "k"}, {"y"}), "upper", upper ? 1 : 0);
  b.Output("y", DataType::kFp32, {2, 3, 4});
  const std::vector<Tensor> inputs{Ramp({2, 3, 4}, 1),
                                   *Tensor::FromValues<int64_t>(Shape{}, std::vector<int64_t>{k})};
  const std::vector<Tensor> out = RunGraph(LoadGraph(b), inputs);
  return out.empty() ? std::vector<float>{} : Values(out[0]);
}

TEST(TriluKernelTest, BatchesOfMatricesAndExtremeK) {
  const std::vector<float> all = Values(Ramp({2, 3, 4}, 1));
  const std::vector<float> none(24, 0.0f);
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(Trilu(true, kMin), all);
  EXPECT_EQ(Trilu(true, kMax), none);
  EXPECT_EQ(Trilu(false, kMax), all);
  EXPECT_EQ(Trilu(false, kMin), none);
  EXPECT_EQ(Trilu(true, -3), all);
  EXPECT_EQ(Trilu(true, 4), none);
  // Upper, k = 1, both matrices: row i keeps columns j >= i + 1.
  EXPECT_EQ(Trilu(true, 1), (std::vector<float>{0, 2,  3,  4,  0, 0, 7,  8,  0, 0, 0, 12,  //
                                                0, 14, 15, 16, 0, 0, 19, 20, 0, 0, 0, 24}));
  // Lower, k = -1: row i keeps columns j <= i - 1.
  EXPECT_EQ(Trilu(false, -1), (std::vector<float>{0, 0, 0, 0, 5,  0, 0, 0, 9,  10, 0, 0,  //
                                                  0, 0, 0, 0, 17, 0, 0, 0, 21, 22, 0, 0}));
}

TEST(TriluKernelTest, InputFromAnIntermediateIsZeroedInPlaceCorrectly) {
  // Relu's output has Trilu as its last reader: Trilu zeroes that buffer in place.
  OnnxBuilder b(14);
  b.Input("x", DataType::kFp32, {3, 3});
  b.Node("Relu", {"x"}, {"r"});
  OnnxBuilder::SetInt(b.Node("Trilu", {"r"}, {"t"}), "upper", 0);
  b.Node("Neg", {"t"}, {"y"});
  b.Output("y", DataType::kFp32, {3, 3});
  const Tensor x = Ramp({3, 3}, 1);
  const std::vector<Tensor> out = RunGraph(LoadGraph(b), {&x, 1});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Values(out[0]), (std::vector<float>{-1, 0, 0, -4, -5, 0, -7, -8, -9}));
}

}  // namespace
}  // namespace brigade::engine::onnx
