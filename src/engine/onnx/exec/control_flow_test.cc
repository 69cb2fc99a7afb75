// If, Loop and Scan beyond what ONNX's node tests cover: subgraphs reading enclosing graphs'
// values and initializers, run-time trip counts and early stops, the iteration bound, nesting,
// and the plans the engine refuses (with the node named).

#include "engine/onnx/exec/control_flow.h"

#include <memory>
#include <string>
#include <vector>

#include "core/status_macros.h"
#include "engine/onnx/exec/compiled_model.h"
#include "engine/onnx/exec/session.h"
#include "engine/onnx/loader/model_loader.h"
#include "engine/onnx/passes/optimizer.h"
#include "engine/onnx/test_util/graph_runner.h"
#include "engine/onnx/test_util/onnx_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::engine::onnx {
namespace {

using ::testing::HasSubstr;

Tensor Int64(int64_t v) { return *Tensor::FromValues<int64_t>(Shape{}, std::vector<int64_t>{v}); }
Tensor Float(float v) { return *Tensor::FromValues<float>(Shape{}, std::vector<float>{v}); }
Tensor Bool(bool v) {
  const bool value = v;
  return *Tensor::FromValues<bool>(Shape{}, std::span<const bool>(&value, 1));
}
Tensor Floats(std::vector<float> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return *Tensor::FromValues<float>(Shape{n}, v);
}
std::vector<float> Values(const Tensor& t) {
  return {t.values<float>().begin(), t.values<float>().end()};
}

// Loads `b` (optimized unless told otherwise) into a one-thread session.
std::unique_ptr<Session> Open(const OnnxBuilder& b, bool optimize = true) {
  auto loaded = LoadOnnxBytes(b.Serialize(), "");
  EXPECT_TRUE(loaded.ok()) << loaded.status();
  if (!loaded.ok()) return nullptr;
  if (optimize) {
    auto report = OptimizeGraph(&loaded->graph);
    EXPECT_TRUE(report.ok()) << report.status();
  }
  auto compiled = CompiledModel::Compile("control_flow", std::move(loaded->graph));
  EXPECT_TRUE(compiled.ok()) << compiled.status();
  if (!compiled.ok()) return nullptr;
  auto session = Session::Create(*compiled, Session::Options{});
  EXPECT_TRUE(session.ok()) << session.status();
  return session.ok() ? *std::move(session) : nullptr;
}

absl::StatusOr<std::vector<Tensor>> RunSession(Session& session, std::vector<Tensor> inputs) {
  std::vector<Tensor> outputs;
  BRIGADE_RETURN_IF_ERROR(session.Run(inputs, &outputs));
  return outputs;
}

// y = If(c) then s + w else x - w, where s = x * x is computed outside and read only by the
// then-branch, and w is the main graph's initializer.
OnnxBuilder IfReadingOuterValues() {
  OnnxBuilder then_branch;
  then_branch.Node("Add", {"s", "w"}, {"then_y"});
  then_branch.Output("then_y", DataType::kFp32, {-1, 4});
  OnnxBuilder else_branch;
  else_branch.Node("Sub", {"x", "w"}, {"else_y"});
  else_branch.Output("else_y", DataType::kFp32, {-1, 4});
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {-1, 4});
  b.Input("c", DataType::kBool, {});
  b.Initializer("w", Ramp({4}, 1.0f, 1.0f));
  b.Node("Mul", {"x", "x"}, {"s"});
  auto& node = b.Node("If", {"c"}, {"y"});
  OnnxBuilder::SetGraph(node, "then_branch", then_branch);
  OnnxBuilder::SetGraph(node, "else_branch", else_branch);
  b.Output("y", DataType::kFp32, {-1, 4});
  return b;
}

TEST(ControlFlowTest, IfBranchesReadOuterValuesAndInitializers) {
  for (bool optimize : {true, false}) {
    SCOPED_TRACE(optimize ? "optimized" : "as loaded");
    auto session = Open(IfReadingOuterValues(), optimize);
    ASSERT_NE(session, nullptr);
    const Tensor x = Ramp({2, 4}, 0.0f, 1.0f);
    for (bool c : {true, false}) {
      auto outputs = RunSession(*session, {x, Bool(c)});
      ASSERT_TRUE(outputs.ok()) << outputs.status();
      const std::vector<float> y = Values((*outputs)[0]);
      ASSERT_EQ(y.size(), 8u);
      for (int i = 0; i < 8; ++i) {
        const float xi = static_cast<float>(i), wi = static_cast<float>(1 + i % 4);
        EXPECT_EQ(y[static_cast<size_t>(i)], c ? xi * xi + wi : xi - wi) << "element " << i;
      }
    }
    // One plan: the condition is a run-time value, not part of the signature.
    EXPECT_EQ(session->plan_count(), 1u);
  }
}

TEST(ControlFlowTest, ValuesOnlyASubgraphReadsStayLiveAndOuterConstantsMoveIn) {
  auto loaded = LoadOnnxBytes(IfReadingOuterValues().Serialize(), "");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  // Loaded: the If reads c, then the captured s, w and x.
  const Node* node = &loaded->graph.nodes().back();
  ASSERT_EQ(node->op_type, "If");
  EXPECT_EQ(node->inputs.size(), 4u);
  ASSERT_TRUE(OptimizeGraph(&loaded->graph).ok());
  // Dead-node elimination keeps the Mul only the then-branch reads; the initializer became the
  // branch's own constant, so the node no longer reads it.
  EXPECT_EQ(CountOps(loaded->graph, "Mul"), 1);
  node = &loaded->graph.nodes().back();
  ASSERT_EQ(node->op_type, "If");
  EXPECT_EQ(node->inputs.size(), 3u);
  const Attribute* then_branch = node->attributes.GetGraph("then_branch");
  ASSERT_NE(then_branch, nullptr);
  EXPECT_EQ(then_branch->captures.size(), 1u);  // s
  EXPECT_EQ(then_branch->g->nodes().front().name, "If_1/then_branch/Add_0");
}

// acc = x; for i in range(M) while cond: acc += 1; cond = i + 1 < stop. M, stop: inputs.
OnnxBuilder CountingLoop() {
  OnnxBuilder body;
  body.Input("i", DataType::kInt64, {});
  body.Input("cond_in", DataType::kBool, {});
  body.Input("acc", DataType::kFp32, {2});
  body.Node("Add", {"acc", "one"}, {"acc_out"});
  body.Node("Add", {"i", "one_i"}, {"next"});
  body.Node("Less", {"next", "stop"}, {"cond_out"});
  body.Output("cond_out", DataType::kBool, {});
  body.Output("acc_out", DataType::kFp32, {2});
  OnnxBuilder b;
  b.Input("m", DataType::kInt64, {});
  b.Input("stop", DataType::kInt64, {});
  b.Input("x", DataType::kFp32, {2});
  b.Initializer("one", Float(1));
  b.Initializer("one_i", Int64(1));
  OnnxBuilder::SetGraph(b.Node("Loop", {"m", "", "x"}, {"y"}), "body", body);
  b.Output("y", DataType::kFp32, {2});
  return b;
}

TEST(ControlFlowTest, LoopWithRunTimeTripCountStopsOnItsCondition) {
  auto session = Open(CountingLoop());
  ASSERT_NE(session, nullptr);
  struct Case {
    int64_t m, stop;
    float iterations;
  };
  for (const Case& c : {Case{10, 3, 3}, Case{2, 100, 2}, Case{0, 5, 0}, Case{5, 0, 1}}) {
    auto outputs = RunSession(*session, {Int64(c.m), Int64(c.stop), Floats({10, 20})});
    ASSERT_TRUE(outputs.ok()) << outputs.status();
    EXPECT_EQ(Values((*outputs)[0]), (std::vector<float>{10 + c.iterations, 20 + c.iterations}))
        << "M " << c.m << ", stop " << c.stop;
  }
  // The trip count and the condition are run-time values: one plan serves them all.
  EXPECT_EQ(session->plan_count(), 1u);
}

TEST(ControlFlowTest, ALoopPastTheIterationBoundFailsTheRequestOnly) {
  OnnxBuilder body;
  body.Input("i", DataType::kInt64, {});
  body.Input("cond_in", DataType::kBool, {});
  body.Input("acc", DataType::kFp32, {1});
  body.Node("Add", {"acc", "one"}, {"acc_out"});
  body.Node("Identity", {"cond_in"}, {"cond_out"});
  body.Output("cond_out", DataType::kBool, {});
  body.Output("acc_out", DataType::kFp32, {1});
  OnnxBuilder b;
  b.Input("m", DataType::kInt64, {});
  b.Input("x", DataType::kFp32, {1});
  b.Initializer("one", Float(1));
  OnnxBuilder::SetGraph(b.Node("Loop", {"m", "", "x"}, {"y"}), "body", body);
  b.Output("y", DataType::kFp32, {1});
  auto session = Open(b);
  ASSERT_NE(session, nullptr);
  auto outputs = RunSession(*session, {Int64(int64_t{1} << 40), Floats({0})});
  ASSERT_FALSE(outputs.ok());
  EXPECT_EQ(outputs.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(outputs.status().message(), HasSubstr("node 'Loop_0' (Loop)"));
  EXPECT_THAT(outputs.status().message(), HasSubstr("exceeds the limit of 1048576 iterations"));
  // The session serves the next request.
  outputs = RunSession(*session, {Int64(3), Floats({0})});
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  EXPECT_EQ(Values((*outputs)[0]), std::vector<float>{3});
}

TEST(ControlFlowTest, ALoopWhoseConditionNeverTurnsFalseStopsAtTheBound) {
  // No trip count, and a condition computed from the data that stays true: the loop runs to the
  // bound and the request fails.
  OnnxBuilder body;
  body.Input("i", DataType::kInt64, {});
  body.Input("cond_in", DataType::kBool, {});
  body.Input("acc", DataType::kFp32, {1});
  body.Node("Add", {"acc", "one"}, {"acc_out"});
  body.Node("Greater", {"acc_out", "floor"}, {"cond_vec"});
  OnnxBuilder::SetInt(body.Node("Cast", {"cond_vec"}, {"cond_f"}), "to", 1);
  OnnxBuilder::SetInt(body.Node("ReduceMax", {"cond_f"}, {"any"}), "keepdims", 0);
  OnnxBuilder::SetInt(body.Node("Cast", {"any"}, {"cond_out"}), "to", 9);
  body.Output("cond_out", DataType::kBool, {});
  body.Output("acc_out", DataType::kFp32, {1});
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {1});
  b.Initializer("one", Float(1));
  b.Initializer("floor", Float(-1));
  b.Initializer("go", Bool(true));
  OnnxBuilder::SetGraph(b.Node("Loop", {"", "go", "x"}, {"y"}), "body", body);
  b.Output("y", DataType::kFp32, {1});
  auto session = Open(b);
  ASSERT_NE(session, nullptr);
  auto outputs = RunSession(*session, {Floats({0})});
  ASSERT_FALSE(outputs.ok());
  EXPECT_EQ(outputs.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(outputs.status().message(), HasSubstr("ran 1048576 iterations"));
  // A start below the floor makes the first condition false: one iteration.
  outputs = RunSession(*session, {Floats({-5})});
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  EXPECT_EQ(Values((*outputs)[0]), std::vector<float>{-4});
}

TEST(ControlFlowTest, NestedIfInLoopWithScanOutput) {
  // acc = x; for i in range(4): acc = acc * two if i % 2 == 0 else acc + one; ys[i] = acc.
  // `two` is read two scopes down (main graph → body → branch).
  OnnxBuilder then_branch;
  then_branch.Node("Mul", {"acc", "two"}, {"doubled"});
  then_branch.Output("doubled", DataType::kFp32, {1});
  OnnxBuilder else_branch;
  else_branch.Node("Add", {"acc", "one"}, {"incremented"});
  else_branch.Output("incremented", DataType::kFp32, {1});
  OnnxBuilder body;
  body.Input("i", DataType::kInt64, {});
  body.Input("cond_in", DataType::kBool, {});
  body.Input("acc", DataType::kFp32, {1});
  body.Node("Mod", {"i", "two_i"}, {"parity"});
  body.Node("Equal", {"parity", "zero_i"}, {"even"});
  auto& branch = body.Node("If", {"even"}, {"acc_out"});
  OnnxBuilder::SetGraph(branch, "then_branch", then_branch);
  OnnxBuilder::SetGraph(branch, "else_branch", else_branch);
  body.Node("Identity", {"acc_out"}, {"scan"});
  body.Node("Identity", {"cond_in"}, {"cond_out"});
  body.Output("cond_out", DataType::kBool, {});
  body.Output("acc_out", DataType::kFp32, {1});
  body.Output("scan", DataType::kFp32, {1});
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {1});
  b.Initializer("m", Int64(4));
  b.Initializer("two", Float(2));
  b.Initializer("one", Float(1));
  b.Initializer("two_i", Int64(2));
  b.Initializer("zero_i", Int64(0));
  OnnxBuilder::SetGraph(b.Node("Loop", {"m", "", "x"}, {"y", "ys"}), "body", body);
  b.Output("y", DataType::kFp32, {1});
  b.Output("ys", DataType::kFp32, {4, 1});
  for (bool optimize : {true, false}) {
    SCOPED_TRACE(optimize ? "optimized" : "as loaded");
    auto session = Open(b, optimize);
    ASSERT_NE(session, nullptr);
    auto outputs = RunSession(*session, {Floats({1})});
    ASSERT_TRUE(outputs.ok()) << outputs.status();
    EXPECT_EQ(Values((*outputs)[0]), std::vector<float>{7});
    EXPECT_EQ((*outputs)[1].shape(), (Shape{4, 1}));
    EXPECT_EQ(Values((*outputs)[1]), (std::vector<float>{2, 3, 6, 7}));
  }
}

TEST(ControlFlowTest, ARunTimeTripCountOfALoopWithScanOutputsJoinsThePlanKey) {
  // ys = [x + 1, x + 2, ...] for m iterations, m a graph input: the scan output's length is m,
  // so each m gets a plan of its own (as a Reshape's shape input would).
  OnnxBuilder body;
  body.Input("i", DataType::kInt64, {});
  body.Input("cond_in", DataType::kBool, {});
  body.Input("acc", DataType::kFp32, {1});
  body.Node("Add", {"acc", "one"}, {"acc_out"});
  body.Node("Identity", {"acc_out"}, {"scan"});
  body.Node("Identity", {"cond_in"}, {"cond_out"});
  body.Output("cond_out", DataType::kBool, {});
  body.Output("acc_out", DataType::kFp32, {1});
  body.Output("scan", DataType::kFp32, {1});
  OnnxBuilder b;
  b.Input("m", DataType::kInt64, {});
  b.Input("x", DataType::kFp32, {1});
  b.Initializer("one", Float(1));
  OnnxBuilder::SetGraph(b.Node("Loop", {"m", "", "x"}, {"y", "ys"}), "body", body);
  b.Output("y", DataType::kFp32, {1});
  b.Output("ys", DataType::kFp32, {-1, 1});
  auto session = Open(b);
  ASSERT_NE(session, nullptr);
  for (int64_t m : {2, 3, 0}) {
    auto outputs = RunSession(*session, {Int64(m), Floats({10})});
    ASSERT_TRUE(outputs.ok()) << outputs.status();
    EXPECT_EQ((*outputs)[1].shape(), (Shape{m, 1}));
    std::vector<float> want;
    for (int64_t k = 1; k <= m; ++k) want.push_back(10 + static_cast<float>(k));
    EXPECT_EQ(Values((*outputs)[1]), want);
    EXPECT_EQ(Values((*outputs)[0]), std::vector<float>{10 + static_cast<float>(m)});
  }
  EXPECT_EQ(session->plan_count(), 3u);
}

TEST(ControlFlowTest, ScanOutputsNeedTheIterationCountAtPlanTime) {
  // The body decides when to stop from the data, so the scan output's length is unknown.
  OnnxBuilder body;
  body.Input("i", DataType::kInt64, {});
  body.Input("cond_in", DataType::kBool, {});
  body.Input("acc", DataType::kFp32, {});
  body.Node("Add", {"acc", "one"}, {"acc_out"});
  body.Node("Less", {"acc_out", "ten"}, {"cond_out"});
  body.Node("Identity", {"acc_out"}, {"scan"});
  body.Output("cond_out", DataType::kBool, {});
  body.Output("acc_out", DataType::kFp32, {});
  body.Output("scan", DataType::kFp32, {});
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {});
  b.Initializer("m", Int64(100));
  b.Initializer("one", Float(1));
  b.Initializer("ten", Float(10));
  OnnxBuilder::SetGraph(b.Node("Loop", {"m", "", "x"}, {"y", "ys"}), "body", body);
  b.Output("y", DataType::kFp32, {});
  b.Output("ys", DataType::kFp32, {-1});
  auto session = Open(b);
  ASSERT_NE(session, nullptr);
  auto outputs = RunSession(*session, {Float(0)});
  ASSERT_FALSE(outputs.ok());
  EXPECT_EQ(outputs.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(outputs.status().message(), HasSubstr("node 'Loop_0' (Loop): scan outputs"));
  EXPECT_THAT(outputs.status().message(), HasSubstr("body computes the condition at run time"));
}

TEST(ControlFlowTest, ALoopCarriedValueMustKeepItsShape) {
  OnnxBuilder body;
  body.Input("i", DataType::kInt64, {});
  body.Input("cond_in", DataType::kBool, {});
  body.Input("acc", DataType::kFp32, {-1});
  OnnxBuilder::SetInt(body.Node("Concat", {"acc", "acc"}, {"acc_out"}), "axis", 0);
  body.Node("Identity", {"cond_in"}, {"cond_out"});
  body.Output("cond_out", DataType::kBool, {});
  body.Output("acc_out", DataType::kFp32, {-1});
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {-1});
  b.Initializer("m", Int64(3));
  OnnxBuilder::SetGraph(b.Node("Loop", {"m", "", "x"}, {"y"}), "body", body);
  b.Output("y", DataType::kFp32, {-1});
  auto session = Open(b);
  ASSERT_NE(session, nullptr);
  auto outputs = RunSession(*session, {Floats({1, 2})});
  ASSERT_FALSE(outputs.ok());
  EXPECT_EQ(outputs.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(outputs.status().message(), HasSubstr("loop-carried value 0 ('acc')"));
  EXPECT_THAT(outputs.status().message(), HasSubstr("must stay fixed across iterations"));
}

TEST(ControlFlowTest, BranchesWithDifferentShapesAreRefusedAtLoad) {
  OnnxBuilder then_branch;
  then_branch.Initializer("a", Ramp({2}));
  then_branch.Node("Identity", {"a"}, {"then_y"});
  then_branch.Output("then_y", DataType::kFp32, {2});
  OnnxBuilder else_branch;
  else_branch.Initializer("b", Ramp({3}));
  else_branch.Node("Identity", {"b"}, {"else_y"});
  else_branch.Output("else_y", DataType::kFp32, {3});
  OnnxBuilder b;
  b.Input("c", DataType::kBool, {});
  auto& node = b.Node("If", {"c"}, {"y"});
  OnnxBuilder::SetGraph(node, "then_branch", then_branch);
  OnnxBuilder::SetGraph(node, "else_branch", else_branch);
  b.Output("y", DataType::kFp32, {-1});
  auto loaded = LoadOnnxBytes(b.Serialize(), "");
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(loaded.status().message(),
              HasSubstr("node 'If_0' (If): output 0 is FP32 [2] in then_branch but FP32 [3] in "
                        "else_branch"));
}

TEST(ControlFlowTest, ScanAlongAnInnerAxisInReverse) {
  // Running sums over axis 1 from the end: state [2], scan input x [2, 3] along axis 1 reversed,
  // scan output stacked along axis 1 in the same direction.
  OnnxBuilder body;
  body.Input("sum_in", DataType::kFp32, {2});
  body.Input("column", DataType::kFp32, {2});
  body.Node("Add", {"sum_in", "column"}, {"sum_out"});
  body.Node("Identity", {"sum_out"}, {"running"});
  body.Output("sum_out", DataType::kFp32, {2});
  body.Output("running", DataType::kFp32, {2});
  OnnxBuilder b(11);
  b.Input("init", DataType::kFp32, {2});
  b.Input("x", DataType::kFp32, {2, 3});
  auto& node = b.Node("Scan", {"init", "x"}, {"sum", "sums"});
  OnnxBuilder::SetGraph(node, "body", body);
  OnnxBuilder::SetInt(node, "num_scan_inputs", 1);
  OnnxBuilder::SetInts(node, "scan_input_axes", {1});
  OnnxBuilder::SetInts(node, "scan_input_directions", {1});
  OnnxBuilder::SetInts(node, "scan_output_axes", {1});
  OnnxBuilder::SetInts(node, "scan_output_directions", {1});
  b.Output("sum", DataType::kFp32, {2});
  b.Output("sums", DataType::kFp32, {2, 3});
  auto session = Open(b);
  ASSERT_NE(session, nullptr);
  // x = [[0, 1, 2], [3, 4, 5]]: from the end, row 0 adds 2, 1, 0 and row 1 adds 5, 4, 3.
  auto outputs = RunSession(*session, {Floats({100, 200}), Ramp({2, 3})});
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  EXPECT_EQ(Values((*outputs)[0]), (std::vector<float>{103, 212}));
  // Written in reverse too: position 2 holds the first step.
  EXPECT_EQ(Values((*outputs)[1]), (std::vector<float>{103, 103, 102, 212, 209, 205}));
}

}  // namespace
}  // namespace brigade::engine::onnx
