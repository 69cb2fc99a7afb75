// PlanAndReleaseSources: fp32 initializers freed once every reader packed them. Later plans
// (other batch sizes, other instances, a plan reading the weight unpacked) must compute what a
// model that kept its initializers computes, and instances share one packed copy.

#include <memory>
#include <vector>

#include "engine/onnx/exec/compiled_model.h"
#include "engine/onnx/exec/planner.h"
#include "engine/onnx/exec/session.h"
#include "engine/onnx/loader/model_loader.h"
#include "engine/onnx/test_util/graph_runner.h"
#include "engine/onnx/test_util/onnx_builder.h"
#include "gtest/gtest.h"

namespace brigade::engine::onnx {
namespace {

std::shared_ptr<CompiledModel> Compile(const OnnxBuilder& b) {
  auto loaded = LoadOnnxBytes(b.Serialize(), "");
  EXPECT_TRUE(loaded.ok()) << loaded.status();
  auto compiled = CompiledModel::Compile("test", std::move(loaded->graph));
  EXPECT_TRUE(compiled.ok()) << compiled.status();
  return *compiled;
}

// y = matmul(relu(conv2(relu(conv1(x)))) flattened, w3): two conv weights and a Linear's.
OnnxBuilder ConvThenLinear() {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {-1, 16, 4, 4});
  b.Initializer("w1", RandomTensor({32, 16, 3, 3}, 1));
  b.Initializer("w2", RandomTensor({16, 32, 1, 1}, 2));
  b.Initializer("w3", RandomTensor({16, 24}, 3));
  OnnxBuilder::SetInts(b.Node("Conv", {"x", "w1"}, {"a0"}), "pads", {1, 1, 1, 1});
  b.Node("Relu", {"a0"}, {"a"});
  b.Node("Conv", {"a", "w2"}, {"c0"});
  b.Node("Relu", {"c0"}, {"c"});
  b.Node("GlobalAveragePool", {"c"}, {"p"});
  b.Initializer("shape", *Tensor::FromValues<int64_t>(Shape{2}, std::vector<int64_t>{-1, 16}));
  b.Node("Reshape", {"p", "shape"}, {"f"});
  b.Node("MatMul", {"f", "w3"}, {"y"});
  b.Output("y", DataType::kFp32, {-1, 24});
  return b;
}

Tensor RunOnce(Session* session, const Tensor& x) {
  std::vector<Tensor> out;
  const absl::Status status = session->Run({&x, 1}, &out);
  EXPECT_TRUE(status.ok()) << status;
  return out.empty() ? Tensor() : out[0];
}

TEST(ReleaseSourcesTest, PackedInitializersAreFreedAndLaterBatchesStillMatch) {
  const std::shared_ptr<CompiledModel> kept = Compile(ConvThenLinear());
  const std::shared_ptr<CompiledModel> released = Compile(ConvThenLinear());
  const Tensor warm = RandomTensor({1, 16, 4, 4}, 9);
  ASSERT_TRUE(PlanAndReleaseSources(*released, {&warm, 1}).ok());
  // w1 (18 KiB), w2 (2 KiB, below the page-sized floor) and w3 (1.5 KiB): w1 goes.
  EXPECT_GE(released->released_bytes(), size_t{32} * 16 * 9 * 4);
  const ValueId w1 = released->graph().FindValue("w1");
  ASSERT_NE(w1, kNoValue);
  EXPECT_EQ(released->graph().value(w1).constant->data(), nullptr);
  EXPECT_FALSE(released->released_keys()[static_cast<size_t>(w1)].empty());

  auto kept_session = Session::Create(kept, Session::Options{});
  auto released_session = Session::Create(released, Session::Options{});
  ASSERT_TRUE(kept_session.ok() && released_session.ok());
  for (int64_t batch : {1, 5, 64, 2}) {
    const Tensor x = RandomTensor({batch, 16, 4, 4}, static_cast<uint32_t>(batch));
    const Tensor want = RunOnce(kept_session->get(), x);
    const Tensor got = RunOnce(released_session->get(), x);
    EXPECT_EQ(MaxAbsDiff(want, got), 0.0f) << "batch " << batch;
  }
}

TEST(ReleaseSourcesTest, ASecondInstanceSharesThePackedWeights) {
  const std::shared_ptr<CompiledModel> model = Compile(ConvThenLinear());
  const Tensor x = RandomTensor({3, 16, 4, 4}, 4);
  ASSERT_TRUE(PlanAndReleaseSources(*model, {&x, 1}).ok());
  auto first = Session::Create(model, Session::Options{});
  ASSERT_TRUE(first.ok());
  const Tensor y1 = RunOnce(first->get(), x);
  const size_t count = model->weights().count();
  const size_t bytes = model->weights().total_bytes();
  auto second = Session::Create(model, Session::Options{});
  ASSERT_TRUE(second.ok());
  const Tensor y2 = RunOnce(second->get(), x);
  EXPECT_EQ(MaxAbsDiff(y1, y2), 0.0f);
  EXPECT_EQ(model->weights().count(), count);
  EXPECT_EQ(model->weights().total_bytes(), bytes);
}

// y = x · w with w [64, 32]: at batch 0 the MatMul reads nothing and packs nothing, so the
// planner rebuilds the released weight for it rather than hand it a null pointer.
TEST(ReleaseSourcesTest, APlanThatDoesNotPackAReleasedWeightGetsItRebuilt) {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {-1, 64});
  b.Initializer("w", RandomTensor({64, 32}, 5));
  b.Node("MatMul", {"x", "w"}, {"y"});
  b.Output("y", DataType::kFp32, {-1, 32});
  const std::shared_ptr<CompiledModel> kept = Compile(b);
  const std::shared_ptr<CompiledModel> model = Compile(b);
  const Tensor warm = RandomTensor({2, 64}, 6);
  ASSERT_TRUE(PlanAndReleaseSources(*model, {&warm, 1}).ok());
  ASSERT_GT(model->released_bytes(), 0u);
  auto session = Session::Create(model, Session::Options{});
  auto kept_session = Session::Create(kept, Session::Options{});
  ASSERT_TRUE(session.ok() && kept_session.ok());
  const Tensor empty = *Tensor::Zeros(DataType::kFp32, Shape{0, 64});
  EXPECT_EQ(RunOnce(session->get(), empty).shape(), (Shape{0, 32}));
  EXPECT_EQ(model->weights().rebuilt_sources(), 1);
  const Tensor x = RandomTensor({7, 64}, 7);
  EXPECT_EQ(MaxAbsDiff(RunOnce(kept_session->get(), x), RunOnce(session->get(), x)), 0.0f);
}

}  // namespace
}  // namespace brigade::engine::onnx
