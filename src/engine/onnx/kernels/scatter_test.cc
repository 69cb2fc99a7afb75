// ScatterND and ScatterElements beyond the ONNX node tests: indices come from the request, so an
// out-of-range one must fail that run with INVALID_ARGUMENT (and leave the session usable),
// negative ones count from the end, and duplicates under a reduction accumulate every update.
// The opset-18 reductions (max, min) are set on the loaded graph: Debian's ONNX 1.12 checker
// knows opsets up to 17.

#include <cstdint>
#include <string>
#include <vector>

#include "engine/onnx/exec/compiled_model.h"
#include "engine/onnx/exec/session.h"
#include "engine/onnx/test_util/graph_runner.h"
#include "gtest/gtest.h"

namespace brigade::engine::onnx {
namespace {

// y = ScatterND(x [4, 3], indices [n, 1] (a graph input), updates [n, 3]).
OnnxBuilder ScatterNDRows(int64_t n, const std::string& reduction, int opset) {
  OnnxBuilder b(opset);
  b.Input("x", DataType::kFp32, {4, 3});
  b.Input("indices", DataType::kInt64, {n, 1});
  b.Input("updates", DataType::kFp32, {n, 3});
  auto& node = b.Node("ScatterND", {"x", "indices", "updates"}, {"y"});
  if (!reduction.empty()) OnnxBuilder::SetString(node, "reduction", reduction);
  b.Output("y", DataType::kFp32, {4, 3});
  return b;
}

Tensor Indices(std::vector<int64_t> shape, const std::vector<int64_t>& values) {
  return *Tensor::FromValues<int64_t>(Shape(shape.begin(), shape.end()), values);
}

Tensor Floats(std::vector<int64_t> shape, const std::vector<float>& values) {
  return *Tensor::FromValues<float>(Shape(shape.begin(), shape.end()), values);
}

// A session on `graph`, for tests that look at a run's status.
std::unique_ptr<Session> MakeSession(Graph graph) {
  auto compiled = CompiledModel::Compile("test", std::move(graph));
  EXPECT_TRUE(compiled.ok()) << compiled.status();
  if (!compiled.ok()) return nullptr;
  auto session = Session::Create(*compiled, Session::Options{});
  EXPECT_TRUE(session.ok()) << session.status();
  return session.ok() ? std::move(*session) : nullptr;
}

std::vector<float> Values(const Tensor& t) {
  return std::vector<float>(t.values<float>().begin(), t.values<float>().end());
}

TEST(ScatterNDKernelTest, OutOfRangeIndexFailsTheRunNamingTheNodeAndKeepsTheSessionUsable) {
  std::unique_ptr<Session> session = MakeSession(LoadGraph(ScatterNDRows(2, "", 13)));
  ASSERT_NE(session, nullptr);
  const Tensor x = Ramp({4, 3});
  const Tensor updates = Floats({2, 3}, {-1, -2, -3, -4, -5, -6});
  for (int64_t bad : {int64_t{4}, int64_t{-5}, int64_t{1} << 40}) {
    const std::vector<Tensor> inputs{x, Indices({2, 1}, {1, bad}), updates};
    std::vector<Tensor> outputs;
    const absl::Status status = session->Run(inputs, &outputs);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << bad << ": " << status;
    EXPECT_NE(status.message().find("ScatterND_0"), std::string::npos) << status;
    EXPECT_NE(status.message().find("out of range"), std::string::npos) << status;
  }
  const std::vector<Tensor> inputs{x, Indices({2, 1}, {1, 3}), updates};
  std::vector<Tensor> outputs;
  ASSERT_TRUE(session->Run(inputs, &outputs).ok());
  EXPECT_EQ(Values(outputs[0]), (std::vector<float>{0, 1, 2, -1, -2, -3, 6, 7, 8, -4, -5, -6}));
}

TEST(ScatterNDKernelTest, NegativeIndicesCountFromTheEnd) {
  const std::vector<Tensor> inputs{Ramp({4, 3}), Indices({2, 1}, {-1, -4}),
                                   Floats({2, 3}, {-1, -2, -3, -4, -5, -6})};
  const std::vector<Tensor> out = RunGraph(LoadGraph(ScatterNDRows(2, "", 13)), inputs);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Values(out[0]), (std::vector<float>{-4, -5, -6, 3, 4, 5, 6, 7, 8, -1, -2, -3}));
}

TEST(ScatterNDKernelTest, DuplicateIndicesUnderAReductionAccumulateEveryUpdate) {
  const std::vector<Tensor> inputs{Ramp({4, 3}, 1), Indices({3, 1}, {2, 2, -2}),
                                   Floats({3, 3}, {1, 2, 3, 10, 20, 30, -5, 0.5f, 100})};
  struct Case {
    std::string reduction;
    std::vector<float> row2;  // data row 2 is {7, 8, 9}
  };
  for (const Case& c : {Case{"add", {13, 30.5f, 142}}, Case{"mul", {-350, 160, 81000}},
                        Case{"max", {10, 20, 100}}, Case{"min", {-5, 0.5f, 3}}}) {
    Graph graph = LoadGraph(ScatterNDRows(3, "", 16));
    // max and min arrived at opset 18, which ONNX 1.12's checker does not know.
    for (Node& node : graph.nodes()) {
      if (node.op_type == "ScatterND") node.attributes.SetString("reduction", c.reduction);
    }
    const std::vector<Tensor> out = RunGraph(std::move(graph), inputs);
    ASSERT_EQ(out.size(), 1u);
    const std::vector<float> got = Values(out[0]);
    EXPECT_EQ(std::vector<float>(got.begin() + 6, got.begin() + 9), c.row2) << c.reduction;
    EXPECT_EQ(std::vector<float>(got.begin(), got.begin() + 6),
              (std::vector<float>{1, 2, 3, 4, 5, 6}))
        << c.reduction;
  }
}

TEST(ScatterNDKernelTest, DuplicateIndicesWithoutAReductionKeepTheLastUpdate) {
  const std::vector<Tensor> inputs{Ramp({4, 3}), Indices({2, 1}, {0, 0}),
                                   Floats({2, 3}, {-1, -2, -3, -4, -5, -6})};
  const std::vector<Tensor> out = RunGraph(LoadGraph(ScatterNDRows(2, "", 13)), inputs);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Values(out[0])[0], -4);
}

TEST(ScatterNDKernelTest, DataFromAnIntermediateIsScatteredInPlaceCorrectly) {
  // Relu's output has ScatterND as its last reader: the planner offers its buffer, and the
  // output takes it instead of copying the data.
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {4, 3});
  b.Input("indices", DataType::kInt64, {2, 1});
  b.Input("updates", DataType::kFp32, {2, 3});
  b.Node("Relu", {"x"}, {"r"});
  b.Node("ScatterND", {"r", "indices", "updates"}, {"s"});
  b.Node("Neg", {"s"}, {"y"});
  b.Output("y", DataType::kFp32, {4, 3});
  const std::vector<Tensor> inputs{Ramp({4, 3}), Indices({2, 1}, {2, 0}),
                                   Floats({2, 3}, {-1, -2, -3, -4, -5, -6})};
  const std::vector<Tensor> out = RunGraph(LoadGraph(b), inputs, 2);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Values(out[0]), (std::vector<float>{4, 5, 6, -3, -4, -5, 1, 2, 3, -9, -10, -11}));
}

TEST(ScatterNDKernelTest, FullIndexTuplesAddressSingleElements) {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {2, 2, 2});
  b.Input("indices", DataType::kInt64, {2, 3});
  b.Input("updates", DataType::kFp32, {2});
  b.Node("ScatterND", {"x", "indices", "updates"}, {"y"});
  b.Output("y", DataType::kFp32, {2, 2, 2});
  const std::vector<Tensor> inputs{Ramp({2, 2, 2}), Indices({2, 3}, {1, 0, 1, 0, -1, 0}),
                                   Floats({2}, {50, 60})};
  const std::vector<Tensor> out = RunGraph(LoadGraph(b), inputs);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Values(out[0]), (std::vector<float>{0, 1, 60, 3, 4, 50, 6, 7}));
}

TEST(ScatterNDKernelTest, UnknownReductionFailsThePlanNamingTheNodeAndAttribute) {
  Graph graph = LoadGraph(ScatterNDRows(2, "", 16));
  for (Node& node : graph.nodes()) node.attributes.SetString("reduction", "mean");
  std::unique_ptr<Session> session = MakeSession(std::move(graph));
  ASSERT_NE(session, nullptr);
  const std::vector<Tensor> inputs{Ramp({4, 3}), Indices({2, 1}, {0, 1}),
                                   Floats({2, 3}, {1, 2, 3, 4, 5, 6})};
  std::vector<Tensor> outputs;
  const absl::Status status = session->Run(inputs, &outputs);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("ScatterND_0"), std::string::npos) << status;
  EXPECT_NE(status.message().find("'reduction'"), std::string::npos) << status;
}

TEST(ScatterElementsKernelTest, OutOfRangeIndexFailsTheRunAndNegativeOnesCountFromTheEnd) {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {2, 3});
  b.Input("indices", DataType::kInt64, {2, 2});
  b.Input("updates", DataType::kFp32, {2, 2});
  OnnxBuilder::SetInt(b.Node("ScatterElements", {"x", "indices", "updates"}, {"y"}), "axis", 1);
  b.Output("y", DataType::kFp32, {2, 3});
  std::unique_ptr<Session> session = MakeSession(LoadGraph(b));
  ASSERT_NE(session, nullptr);
  const Tensor updates = Floats({2, 2}, {-1, -2, -3, -4});
  std::vector<Tensor> outputs;
  const std::vector<Tensor> bad{Ramp({2, 3}), Indices({2, 2}, {0, 3, 0, 0}), updates};
  const absl::Status status = session->Run(bad, &outputs);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("ScatterElements_0"), std::string::npos) << status;
  const std::vector<Tensor> good{Ramp({2, 3}), Indices({2, 2}, {-1, 0, 1, -3}), updates};
  ASSERT_TRUE(session->Run(good, &outputs).ok());
  EXPECT_EQ(Values(outputs[0]), (std::vector<float>{-2, 1, -1, -4, -3, 5}));
}

// GatherND (slice_gather.cc), ScatterND's read side, checks its indices the same way.
TEST(GatherNDKernelTest, OutOfRangeIndexFailsTheRunAndNegativeOnesCountFromTheEnd) {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {2, 3, 2});
  b.Input("indices", DataType::kInt64, {2, 1, 1});
  OnnxBuilder::SetInt(b.Node("GatherND", {"x", "indices"}, {"y"}), "batch_dims", 1);
  b.Output("y", DataType::kFp32, {2, 1, 2});
  std::unique_ptr<Session> session = MakeSession(LoadGraph(b));
  ASSERT_NE(session, nullptr);
  std::vector<Tensor> outputs;
  const std::vector<Tensor> bad{Ramp({2, 3, 2}), Indices({2, 1, 1}, {0, 3})};
  const absl::Status status = session->Run(bad, &outputs);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("GatherND_0"), std::string::npos) << status;
  const std::vector<Tensor> good{Ramp({2, 3, 2}), Indices({2, 1, 1}, {-1, 1})};
  ASSERT_TRUE(session->Run(good, &outputs).ok());
  // Batch 0 takes its row 2 ({4, 5}), batch 1 its row 1 ({8, 9}).
  EXPECT_EQ(Values(outputs[0]), (std::vector<float>{4, 5, 8, 9}));
}

}  // namespace
}  // namespace brigade::engine::onnx
