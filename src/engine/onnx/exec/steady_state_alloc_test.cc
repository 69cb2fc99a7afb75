// A steady-state run (plan cached) allocates only its output tensors: every intermediate lives
// in the planned arena and kernels keep their scratch in it. Counted by
// testing::AllocationCounter.

#include <cstdint>

#include "engine/onnx/exec/compiled_model.h"
#include "engine/onnx/exec/session.h"
#include "engine/onnx/passes/optimizer.h"
#include "engine/onnx/test_util/graph_runner.h"
#include "gtest/gtest.h"
#include "testing/allocation_counter.h"

namespace brigade::engine::onnx {
namespace {

// Runs `graph` three times on `x` (plan build, warm-up, measured) and returns the allocations
// of the measured run.
int64_t SteadyStateAllocations(Graph graph, const Tensor& x) {
  EXPECT_TRUE(OptimizeGraph(&graph).ok());
  auto compiled = CompiledModel::Compile("alloc", std::move(graph));
  EXPECT_TRUE(compiled.ok());
  Session::Options options;
  options.threads = 2;
  auto session = Session::Create(*compiled, options);
  EXPECT_TRUE(session.ok());
  std::vector<Tensor> outputs;
  outputs.reserve(4);
  EXPECT_TRUE((*session)->Run({&x, 1}, &outputs).ok());  // builds the plan
  EXPECT_TRUE((*session)->Run({&x, 1}, &outputs).ok());  // warms the thread pool
  brigade::testing::AllocationCounter::Start();
  const absl::Status status = (*session)->Run({&x, 1}, &outputs);
  const int64_t allocations = brigade::testing::AllocationCounter::Stop();
  EXPECT_TRUE(status.ok());
  return allocations;
}

TEST(SteadyStateAllocationTest, EngineKernelsAllocateOnlyTheOutputs) {
  // Ops on Brigade's own loops: transpose, pad, resize, broadcast arithmetic, reduce, gather.
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {-1, 3, 8, 8});
  b.Initializer(
      "pads", *Tensor::FromValues<int64_t>(Shape{8}, std::vector<int64_t>{0, 0, 1, 1, 0, 0, 1, 1}));
  b.Initializer("scales", *Tensor::FromValues<float>(Shape{4}, std::vector<float>{1, 1, 2, 2}));
  b.Initializer("bias", RandomTensor({20}, 1));
  b.Initializer("idx", *Tensor::FromValues<int64_t>(Shape{2}, std::vector<int64_t>{2, 0}));
  OnnxBuilder::SetInts(b.Node("Transpose", {"x"}, {"t"}), "perm", {0, 2, 3, 1});
  b.Node("Pad", {"t", "pads"}, {"p"});
  b.Node("Resize", {"p", "", "scales"}, {"u"});
  OnnxBuilder::SetInts(b.Node("Transpose", {"u"}, {"v"}), "perm", {0, 3, 1, 2});
  b.Node("Add", {"v", "bias"}, {"a"});
  OnnxBuilder::SetInts(b.Node("ReduceMax", {"a"}, {"m"}), "axes", {2});
  OnnxBuilder::SetInt(b.Node("Gather", {"m", "idx"}, {"y"}), "axis", 1);
  b.Output("y", DataType::kFp32, {-1, 2, 1, 20});
  // One output tensor: its buffer and its shared_ptr control block.
  EXPECT_LE(SteadyStateAllocations(LoadGraph(b), RandomTensor({2, 3, 8, 8}, 3)), 2);
}

TEST(SteadyStateAllocationTest, OneDnnStepsAddOnlyTheLibrarysPerCallArgumentMap) {
  // conv → relu → pooling → flatten → matmul → softmax: the intermediates live in the arena; what
  // remains is oneDNN's own per-execute argument map (dnnl_primitive_execute builds one per
  // call), a few small allocations per primitive independent of tensor sizes.
  auto build = [](int64_t width) {
    OnnxBuilder b;
    b.Input("x", DataType::kFp32, {-1, 3, width, width});
    b.Initializer("w", RandomTensor({8, 3, 3, 3}, 1));
    b.Initializer("fc", RandomTensor({8, 10}, 2));
    OnnxBuilder::SetInts(b.Node("Conv", {"x", "w"}, {"c"}), "pads", {1, 1, 1, 1});
    b.Node("Relu", {"c"}, {"r"});
    b.Node("GlobalAveragePool", {"r"}, {"g"});
    b.Node("Flatten", {"g"}, {"f"});
    b.Node("MatMul", {"f", "fc"}, {"logits"});
    OnnxBuilder::SetInt(b.Node("Softmax", {"logits"}, {"probs"}), "axis", -1);
    b.Output("probs", DataType::kFp32, {-1, 10});
    return LoadGraph(b);
  };
  const int64_t small = SteadyStateAllocations(build(8), RandomTensor({1, 3, 8, 8}, 3));
  const int64_t large = SteadyStateAllocations(build(64), RandomTensor({4, 3, 64, 64}, 3));
  // Outputs plus a handful per oneDNN call (4–5 primitives, depending on whether the first
  // convolution reorders its input); nothing scales with the activations.
  EXPECT_LE(small, 2 + 5 * 8);
  EXPECT_LE(large, 2 + 5 * 8);
}

TEST(SteadyStateAllocationTest, LoopIterationsAndIfBranchesAllocateNothing) {
  // y = If(sum(h) > 0, h * 2, h - 1) after 16 iterations of h = h * w + w: each iteration runs
  // the body's plan on the Loop's scratch, the taken branch writes straight into the output.
  OnnxBuilder body;
  body.Input("i", DataType::kInt64, {});
  body.Input("cond_in", DataType::kBool, {});
  body.Input("h", DataType::kFp32, {-1, 8});
  body.Node("Mul", {"h", "w"}, {"hw"});
  body.Node("Add", {"hw", "w"}, {"h_out"});
  body.Node("Identity", {"cond_in"}, {"cond_out"});
  body.Output("cond_out", DataType::kBool, {});
  body.Output("h_out", DataType::kFp32, {-1, 8});
  OnnxBuilder then_branch;
  then_branch.Node("Mul", {"h16", "two"}, {"then_y"});
  then_branch.Output("then_y", DataType::kFp32, {-1, 8});
  OnnxBuilder else_branch;
  else_branch.Node("Sub", {"h16", "two"}, {"else_y"});
  else_branch.Output("else_y", DataType::kFp32, {-1, 8});
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {-1, 8});
  b.Initializer("w", RandomTensor({8}, 1));
  b.Initializer("two", *Tensor::FromValues<float>(Shape{}, std::vector<float>{2}));
  b.Initializer("m", *Tensor::FromValues<int64_t>(Shape{}, std::vector<int64_t>{16}));
  OnnxBuilder::SetGraph(b.Node("Loop", {"m", "", "x"}, {"h16"}), "body", body);
  OnnxBuilder::SetInt(b.Node("ReduceSum", {"h16"}, {"s"}), "keepdims", 0);
  b.Node("Greater", {"s", "two"}, {"c"});
  auto& node = b.Node("If", {"c"}, {"y"});
  OnnxBuilder::SetGraph(node, "then_branch", then_branch);
  OnnxBuilder::SetGraph(node, "else_branch", else_branch);
  b.Output("y", DataType::kFp32, {-1, 8});
  EXPECT_LE(SteadyStateAllocations(LoadGraph(b), RandomTensor({2, 8}, 3)), 2);
}

}  // namespace
}  // namespace brigade::engine::onnx
