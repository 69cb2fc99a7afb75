// Corrupt and hostile model files must produce errors, never crashes: every byte-level mutation
// of a valid model either fails to load with a status, or loads and then plans and runs (or
// fails to plan/run) with a status.

#include <cstdio>
#include <random>
#include <string>

#include "core/strings.h"
#include "engine/onnx/exec/compiled_model.h"
#include "engine/onnx/exec/session.h"
#include "engine/onnx/loader/model_loader.h"
#include "engine/onnx/passes/optimizer.h"
#include "engine/onnx/test_util/onnx_builder.h"
#include "gtest/gtest.h"

namespace brigade::engine::onnx {
namespace {

std::string SmallCnn() {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {-1, 2, 6, 6});
  b.Initializer("w", RandomTensor({3, 2, 3, 3}, 1));
  b.Initializer("shape", *Tensor::FromValues<int64_t>(Shape{2}, std::vector<int64_t>{0, -1}));
  b.Initializer("fc", RandomTensor({48, 4}, 2));
  OnnxBuilder::SetInts(b.Node("Conv", {"x", "w"}, {"c"}), "pads", {0, 0, 0, 0});
  b.Node("Relu", {"c"}, {"r"});
  b.Node("Reshape", {"r", "shape"}, {"f"});
  b.Node("MatMul", {"f", "fc"}, {"y"});
  b.Output("y", DataType::kFp32, {-1, 4});
  return b.Serialize();
}

// Loads, optimizes, plans and runs `bytes` as far as it goes; returns how far it got.
int Exercise(const std::string& bytes) {
  auto loaded = LoadOnnxBytes(bytes, "");
  if (!loaded.ok()) return 0;
  if (!OptimizeGraph(&loaded->graph).ok()) return 1;
  std::vector<Tensor> inputs;
  for (ValueId id : loaded->graph.inputs()) {
    const Value& v = loaded->graph.value(id);
    Shape shape = v.shape.value_or(Shape{});
    for (int64_t& d : shape) d = d < 0 ? 1 : std::min<int64_t>(d, 64);
    auto t = Tensor::Zeros(v.dtype == DataType::kInvalid ? DataType::kFp32 : v.dtype, shape);
    if (!t.ok()) return 1;
    inputs.push_back(*std::move(t));
  }
  auto compiled = CompiledModel::Compile("hostile", std::move(loaded->graph));
  if (!compiled.ok()) return 1;
  auto session = Session::Create(*compiled, Session::Options{});
  if (!session.ok()) return 1;
  std::vector<Tensor> outputs;
  return (*session)->Run(inputs, &outputs).ok() ? 3 : 2;
}

TEST(HostileModelTest, ByteMutationsNeverCrash) {
  const std::string valid = SmallCnn();
  ASSERT_EQ(Exercise(valid), 3);
  std::mt19937 rng(12345);
  int reached[4] = {0, 0, 0, 0};
  for (int trial = 0; trial < 400; ++trial) {
    std::string bytes = valid;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) {
      bytes[rng() % bytes.size()] = static_cast<char>(rng() & 0xff);
    }
    ++reached[Exercise(bytes)];
  }
  std::printf("reached: load-fail %d, plan/compile-fail %d, run-fail %d, ran %d\n", reached[0],
              reached[1], reached[2], reached[3]);
  // Most mutations land in weight bytes and still run; the rest must have failed cleanly.
  EXPECT_GT(reached[3], 0);
  EXPECT_GT(reached[0] + reached[1] + reached[2], 0);
}

TEST(HostileModelTest, TruncationsAndGarbageNeverCrash) {
  const std::string valid = SmallCnn();
  for (size_t cut = 0; cut < valid.size(); cut += 7) {
    EXPECT_LT(Exercise(valid.substr(0, cut)), 3) << cut;
  }
  std::mt19937 rng(7);
  for (int trial = 0; trial < 100; ++trial) {
    std::string garbage(static_cast<size_t>(rng() % 512), '\0');
    for (char& c : garbage) c = static_cast<char>(rng() & 0xff);
    Exercise(garbage);
  }
}

// If nodes nested `depth` deep (each branch holds the next If), the innermost branches returning
// x; every level reads c and x from the main graph.
OnnxBuilder NestedIfs(int depth) {
  OnnxBuilder leaf;
  leaf.Node("Identity", {"x"}, {"leaf_y"});
  leaf.Output("leaf_y", DataType::kFp32, {2});
  OnnxBuilder branch = leaf;
  for (int level = depth; level-- > 1;) {
    OnnxBuilder outer;
    const std::string y = StrCat("y", level);
    auto& node = outer.Node("If", {"c"}, {y});
    OnnxBuilder::SetGraph(node, "then_branch", branch);
    OnnxBuilder::SetGraph(node, "else_branch", branch);
    outer.Output(y, DataType::kFp32, {2});
    branch = std::move(outer);
  }
  OnnxBuilder b;
  b.Input("c", DataType::kBool, {});
  b.Input("x", DataType::kFp32, {2});
  auto& node = b.Node("If", {"c"}, {"y"});
  OnnxBuilder::SetGraph(node, "then_branch", branch);
  OnnxBuilder::SetGraph(node, "else_branch", branch);
  b.Output("y", DataType::kFp32, {2});
  return b;
}

TEST(HostileModelTest, SubgraphsNestedTooDeepAreRefused) {
  auto deep = LoadOnnxBytes(NestedIfs(kMaxSubgraphDepth + 1).Serialize(), "");
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(deep.status().message().find("subgraphs nest deeper than 8 levels"),
            std::string_view::npos)
      << deep.status();
  // At the bound the model loads, and runs.
  const std::string bytes = NestedIfs(kMaxSubgraphDepth).Serialize();
  EXPECT_EQ(Exercise(bytes), 3) << "a model nested " << kMaxSubgraphDepth << " deep";
}

}  // namespace
}  // namespace brigade::engine::onnx
