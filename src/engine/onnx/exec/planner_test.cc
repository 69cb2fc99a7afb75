// The planner's in-place offer (KernelContext::reusable_inputs): a convolution that adds a
// residual it is the last reader of writes its output over the residual's buffer; a residual
// read again later keeps its own. Both must compute what the unfused graph computes.

#include "engine/onnx/exec/planner.h"

#include <array>
#include <string>
#include <vector>

#include "engine/onnx/passes/activation_fusion.h"
#include "engine/onnx/passes/residual_add_fusion.h"
#include "engine/onnx/test_util/graph_runner.h"
#include "gtest/gtest.h"

namespace brigade::engine::onnx {
namespace {

// A ResNet bottleneck on x [-1, 32, 6, 6]:
//   a = relu(conv1(x)); c = conv3(relu(conv2(a))); s = relu(c + a); y = conv4(s)
// and, with `reuse_residual_later`, a second output y2 = a + y that reads `a` after the block.
OnnxBuilder Bottleneck(bool reuse_residual_later) {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {-1, 32, 6, 6});
  b.Initializer("w1", RandomTensor({32, 32, 1, 1}, 1));
  b.Initializer("w2", RandomTensor({16, 32, 3, 3}, 2));
  b.Initializer("w3", RandomTensor({32, 16, 1, 1}, 3));
  b.Initializer("w4", RandomTensor({32, 32, 1, 1}, 4));
  b.Node("Conv", {"x", "w1"}, {"a0"});
  b.Node("Relu", {"a0"}, {"a"});
  OnnxBuilder::SetInts(b.Node("Conv", {"a", "w2"}, {"b0"}), "pads", {1, 1, 1, 1});
  b.Node("Relu", {"b0"}, {"b"});
  b.Node("Conv", {"b", "w3"}, {"c"});
  b.Node("Add", {"c", "a"}, {"s0"});
  b.Node("Relu", {"s0"}, {"s"});
  b.Node("Conv", {"s", "w4"}, {"y"});
  b.Output("y", DataType::kFp32, {-1, 32, 6, 6});
  if (reuse_residual_later) {
    b.Node("Add", {"a", "y"}, {"y2"});
    b.Output("y2", DataType::kFp32, {-1, 32, 6, 6});
  }
  return b;
}

Graph Fused(const Graph& original) {
  Graph g = original;
  EXPECT_TRUE(ActivationFusion().Run(&g).ok());
  EXPECT_TRUE(ResidualAddFusion().Run(&g).ok());
  EXPECT_TRUE(ActivationFusion().Run(&g).ok());
  return g;
}

// Whether the step of the node carrying the residual Add writes into the residual's slot.
bool ResidualAddRunsInPlace(const Graph& fused, const Tensor& x) {
  auto compiled = CompiledModel::Compile("test", fused);
  EXPECT_TRUE(compiled.ok()) << compiled.status();
  dnnl::stream stream((*compiled)->engine());
  auto plan = BuildPlan(**compiled, {&x, 1}, 1, stream);
  EXPECT_TRUE(plan.ok()) << plan.status();
  int found = 0;
  bool in_place = false;
  for (const Node& node : fused.nodes()) {
    const auto ops = node.attributes.GetStrings("post_ops");
    if (node.removed || ops.empty() || ops[0] != "Add") continue;
    const auto residual = static_cast<size_t>(node.attributes.GetInt("post_op_input", 0));
    for (const ExecutionPlan::Step& step : (*plan)->steps) {
      if (step.name != node.name) continue;
      ++found;
      in_place = step.outputs[0] == step.inputs[residual];
    }
  }
  EXPECT_EQ(found, 1);
  return in_place;
}

TEST(PlannerTest, AResidualReadLastByItsConvIsOverwrittenInPlace) {
  const Graph original = LoadGraph(Bottleneck(false));
  const Graph fused = Fused(original);
  ASSERT_EQ(CountOps(fused, "Add"), 0);
  for (int64_t batch : {1, 3}) {
    const Tensor x = RandomTensor({batch, 32, 6, 6}, 5);
    EXPECT_TRUE(ResidualAddRunsInPlace(fused, x));
    EXPECT_LT(MaxAbsDiff(RunGraph(fused, {&x, 1})[0], RunGraph(original, {&x, 1})[0]), 1e-4f);
  }
}

TEST(PlannerTest, AResidualReadAgainLaterKeepsItsBuffer) {
  const Graph original = LoadGraph(Bottleneck(true));
  const Graph fused = Fused(original);
  const Tensor x = RandomTensor({2, 32, 6, 6}, 6);
  EXPECT_FALSE(ResidualAddRunsInPlace(fused, x));
  const auto got = RunGraph(fused, {&x, 1});
  const auto want = RunGraph(original, {&x, 1});
  ASSERT_EQ(got.size(), 2u);
  ASSERT_EQ(want.size(), 2u);
  EXPECT_LT(MaxAbsDiff(got[0], want[0]), 1e-4f);
  EXPECT_LT(MaxAbsDiff(got[1], want[1]), 1e-4f);
}

// The status of planning `b`'s model for input `x`: what a hostile model's plan is refused with.
absl::Status PlanStatus(const OnnxBuilder& b, const Tensor& x) {
  auto compiled = CompiledModel::Compile("test", LoadGraph(b));
  EXPECT_TRUE(compiled.ok()) << compiled.status();  // the refusal must come from planning
  if (!compiled.ok()) return compiled.status();
  dnnl::stream stream((*compiled)->engine());
  return BuildPlan(**compiled, {&x, 1}, 1, stream).status();
}

// A model's Resize scales are untrusted: the fuzzer found one asking for a 10^32-wide output,
// which overflowed the conversion to a size. The plan is refused with the reason instead.
TEST(PlannerTest, AResizeScaledPastTheSizeLimitIsRefusedNotAllocated) {
  for (const float scale : {3.2e31f, 1.0e9f}) {
    OnnxBuilder b;
    b.Input("x", DataType::kFp32, {1, 1, 2, 2});
    const std::array<float, 4> scales = {1, 1, 1, scale};
    b.Initializer("scales", *Tensor::FromValues<float>(Shape{4}, scales));
    b.Node("Resize", {"x", "", "scales"}, {"y"});
    b.Output("y", DataType::kFp32, {-1, -1, -1, -1});
    const absl::Status status = PlanStatus(b, Ramp({1, 1, 2, 2}));
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_NE(status.message().find("output dimension"), std::string::npos) << status;
  }
}

// The fuzzer's finds: an Expand to ~2^101 elements (the count wrapped to 0), one to a negative
// shape (its strides overflowed), and a Tile whose repeats overflow. Each shape is refused when
// the kernel is prepared, with the reason, never sized with an overflowed count.
TEST(PlannerTest, ShapesTooLargeOrNegativeAreRefusedWithTheReason) {
  struct Case {
    std::string op;
    std::array<int64_t, 2> values;
    std::string reason;
  };
  const Case cases[] = {
      {"Expand", {int64_t{1} << 55, int64_t{1} << 46}, "too many elements"},
      {"Expand", {int64_t{1} << 20, int64_t{1} << 20}, "elements"},
      {"Expand", {-17179868672, 4294967294}, "negative dimension"},
      {"Tile", {int64_t{1} << 62, 4}, "too many elements"},
      {"Reshape", {int64_t{1} << 40, int64_t{1} << 40}, "too many elements"},
  };
  for (const Case& c : cases) {
    OnnxBuilder b;
    b.Input("x", DataType::kFp32, {1, 1});
    b.Initializer("shape", *Tensor::FromValues<int64_t>(Shape{2}, c.values));
    b.Node(c.op, {"x", "shape"}, {"y"});
    b.Output("y", DataType::kFp32, {-1, -1});
    const absl::Status status = PlanStatus(b, Ramp({1, 1}));
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.op << ": " << status;
    EXPECT_NE(status.message().find(c.reason), std::string::npos) << c.op << ": " << status;
  }
}

// Window attributes and pads come from the model too; their products must not overflow.
TEST(PlannerTest, WindowAttributesAndPadsPastTheirBoundsAreRefused) {
  const Tensor x = Ramp({1, 1, 4, 4});
  auto plan_status = [&](OnnxBuilder& b) {
    b.Output("y", DataType::kFp32, {-1, -1, -1, -1});
    return PlanStatus(b, x);
  };
  {
    OnnxBuilder b;
    b.Input("x", DataType::kFp32, {1, 1, 4, 4});
    b.Initializer("w", RandomTensor({1, 1, 1, 1}, 1));
    OnnxBuilder::SetInts(b.Node("Conv", {"x", "w"}, {"y"}), "dilations", {int64_t{1} << 62, 1});
    const absl::Status status = plan_status(b);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_NE(status.message().find("at most"), std::string::npos) << status;
  }
  {
    OnnxBuilder b;
    b.Input("x", DataType::kFp32, {1, 1, 4, 4});
    const std::array<int64_t, 8> pads = {0, 0, 0, INT64_MAX, 0, 0, 0, 1};
    b.Initializer("pads", *Tensor::FromValues<int64_t>(Shape{8}, pads));
    b.Node("Pad", {"x", "pads"}, {"y"});
    const absl::Status status = plan_status(b);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_NE(status.message().find("overflow"), std::string::npos) << status;
  }
}

// The fuzzer's find: a Concat of scalars indexed its output's shape at axis 0. An axis never
// names a dimension a scalar does not have.
TEST(PlannerTest, AConcatOfScalarsIsRefused) {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {});
  OnnxBuilder::SetInt(b.Node("Concat", {"x", "x"}, {"y"}), "axis", 0);
  b.Output("y", DataType::kFp32, {2});
  const absl::Status status = PlanStatus(b, Ramp({}));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("out of range for rank 0"), std::string::npos) << status;
}

// The fuzzer's find: a Slice of a rank-0 value indexed past its (empty) per-axis table.
TEST(PlannerTest, ASliceOfAScalarIsRefused) {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {});
  const std::array<int64_t, 1> zero = {0};
  const std::array<int64_t, 1> one = {1};
  b.Initializer("starts", *Tensor::FromValues<int64_t>(Shape{1}, zero));
  b.Initializer("ends", *Tensor::FromValues<int64_t>(Shape{1}, one));
  b.Node("Slice", {"x", "starts", "ends"}, {"y"});
  b.Output("y", DataType::kFp32, {});
  const absl::Status status = PlanStatus(b, Ramp({}));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("scalar"), std::string::npos) << status;
}

// The fuzzer's finds: a Transpose and an Expand whose innermost output dimension is 0 divided by
// it. A node whose outputs are all empty runs no kernel; nodes after it still see its (empty)
// value.
TEST(PlannerTest, AnExpandToAnEmptyShapeRunsNoKernelAndFeedsItsReaders) {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {1, 1});
  const std::array<int64_t, 2> dims = {3, 0};
  b.Initializer("shape", *Tensor::FromValues<int64_t>(Shape{2}, dims));
  b.Node("Expand", {"x", "shape"}, {"e"});
  b.Node("Relu", {"e"}, {"r"});
  b.Node("Shape", {"r"}, {"y"});
  b.Output("r", DataType::kFp32, {3, 0});
  b.Output("y", DataType::kInt64, {2});
  const Tensor x = Ramp({1, 1});
  const std::vector<Tensor> out = RunGraph(LoadGraph(b), {&x, 1});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape(), (Shape{3, 0}));
  ASSERT_EQ(out[1].shape(), (Shape{2}));
  EXPECT_EQ(out[1].values<int64_t>()[0], 3);
  EXPECT_EQ(out[1].values<int64_t>()[1], 0);
}

TEST(PlannerTest, ATransposeOfAnEmptyTensorGivesAnEmptyTensor) {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {0, 2});
  OnnxBuilder::SetInts(b.Node("Transpose", {"x"}, {"y"}), "perm", {1, 0});
  b.Output("y", DataType::kFp32, {2, 0});
  const Tensor x = *Tensor::Zeros(DataType::kFp32, {0, 2});
  const std::vector<Tensor> y = RunGraph(LoadGraph(b), {&x, 1});
  ASSERT_EQ(y.size(), 1u);
  EXPECT_EQ(y[0].shape(), (Shape{2, 0}));
}

}  // namespace
}  // namespace brigade::engine::onnx
