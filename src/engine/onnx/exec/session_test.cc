#include "engine/onnx/exec/session.h"

#include "engine/onnx/loader/model_loader.h"
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

// y = relu(x · w + b) with x [batch, 3], w [3, 2].
OnnxBuilder DenseModel() {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {-1, 3});
  b.Initializer("w", Ramp({3, 2}, -1.0f, 0.5f));
  b.Initializer("b", Ramp({2}, 0.25f, -1.0f));
  b.Node("MatMul", {"x", "w"}, {"xw"});
  b.Node("Add", {"xw", "b"}, {"pre"});
  b.Node("Relu", {"pre"}, {"y"});
  b.Output("y", DataType::kFp32, {-1, 2});
  return b;
}

std::vector<float> Dense(const Tensor& x) {
  const Tensor w = Ramp({3, 2}, -1.0f, 0.5f);
  const Tensor b = Ramp({2}, 0.25f, -1.0f);
  const int64_t rows = x.shape()[0];
  std::vector<float> y;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < 2; ++j) {
      float acc = b.values<float>()[j];
      for (int64_t k = 0; k < 3; ++k)
        acc += x.values<float>()[r * 3 + k] * w.values<float>()[k * 2 + j];
      y.push_back(std::max(acc, 0.0f));
    }
  }
  return y;
}

TEST(SessionTest, RunsEachBatchSizeAndCachesOnePlanPerShape) {
  auto session = Session::Create(Compile(DenseModel()), Session::Options{});
  ASSERT_TRUE(session.ok());
  for (int64_t batch : {1, 4, 1, 4, 7}) {
    const Tensor x = Ramp({batch, 3}, -2.0f, 0.3f);
    std::vector<Tensor> out;
    ASSERT_TRUE((*session)->Run({&x, 1}, &out).ok());
    ASSERT_EQ(out.size(), 1u);
    ASSERT_EQ(out[0].shape(), (Shape{batch, 2}));
    const std::vector<float> want = Dense(x);
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_NEAR(out[0].values<float>()[i], want[i], 1e-5f) << "batch " << batch << " i " << i;
    }
  }
  EXPECT_EQ((*session)->plan_count(), 3u);
}

TEST(SessionTest, PlanCacheIsBounded) {
  Session::Options options;
  options.max_plans = 2;
  auto session = Session::Create(Compile(DenseModel()), options);
  ASSERT_TRUE(session.ok());
  for (int64_t batch = 1; batch <= 5; ++batch) {
    const Tensor x = Ramp({batch, 3});
    std::vector<Tensor> out;
    ASSERT_TRUE((*session)->Run({&x, 1}, &out).ok());
  }
  EXPECT_EQ((*session)->plan_count(), 2u);
}

TEST(SessionTest, RejectsWrongTypeAndShapeNamingTheInput) {
  auto session = Session::Create(Compile(DenseModel()), Session::Options{});
  ASSERT_TRUE(session.ok());
  std::vector<Tensor> out;
  const Tensor ints = *Tensor::Zeros(DataType::kInt32, Shape{1, 3});
  absl::Status status = (*session)->Run({&ints, 1}, &out);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(status.message()).find("'x'"), std::string::npos);
  const Tensor wrong = Ramp({2, 4});
  status = (*session)->Run({&wrong, 1}, &out);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*session)->Run({}, &out).code(), absl::StatusCode::kInvalidArgument);
}

TEST(SessionTest, ShapeInputContentsJoinThePlanKey) {
  // Reshape's target shape is a graph input: each distinct value needs its own plan.
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {6});
  b.Input("shape", DataType::kInt64, {2});
  b.Node("Reshape", {"x", "shape"}, {"y"});
  b.Output("y", DataType::kFp32, {-1, -1});
  auto session = Session::Create(Compile(b), Session::Options{});
  ASSERT_TRUE(session.ok());
  const Tensor x = Ramp({6});
  for (auto dims : {std::vector<int64_t>{2, 3}, std::vector<int64_t>{3, 2}}) {
    const Tensor shape = *Tensor::FromValues<int64_t>(Shape{2}, dims);
    const Tensor inputs[] = {x, shape};
    std::vector<Tensor> out;
    ASSERT_TRUE((*session)->Run(inputs, &out).ok());
    EXPECT_EQ(out[0].shape(), (Shape{dims[0], dims[1]}));
    EXPECT_EQ(out[0].values<float>()[5], 5.0f);
  }
  EXPECT_EQ((*session)->plan_count(), 2u);
}

TEST(SessionTest, ShapeSubgraphIsEvaluatedAtPlanTime) {
  // y = Reshape(x, Concat(Shape(x)[0], [-1])): the shape chain costs no step at run time.
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {-1, 2, 3});
  b.Initializer("zero", *Tensor::FromValues<int64_t>(Shape{1}, std::vector<int64_t>{0}));
  b.Initializer("minus1", *Tensor::FromValues<int64_t>(Shape{1}, std::vector<int64_t>{-1}));
  b.Node("Shape", {"x"}, {"s"});
  OnnxBuilder::SetInt(b.Node("Gather", {"s", "zero"}, {"n"}), "axis", 0);
  OnnxBuilder::SetInt(b.Node("Concat", {"n", "minus1"}, {"target"}), "axis", 0);
  b.Node("Reshape", {"x", "target"}, {"flat"});
  b.Node("Relu", {"flat"}, {"y"});
  b.Output("y", DataType::kFp32, {-1, 6});
  auto session = Session::Create(Compile(b), Session::Options{});
  ASSERT_TRUE(session.ok());
  const Tensor x = Ramp({3, 2, 3}, -5.0f);
  std::vector<Tensor> out;
  ASSERT_TRUE((*session)->Run({&x, 1}, &out).ok());
  EXPECT_EQ(out[0].shape(), (Shape{3, 6}));
  EXPECT_EQ(out[0].values<float>()[0], 0.0f);
  EXPECT_EQ(out[0].values<float>()[17], 12.0f);
  // Only Reshape (a view) and Relu run; Shape/Gather/Concat were computed by the planner.
  ASSERT_NE((*session)->last_plan(), nullptr);
  EXPECT_EQ((*session)->last_plan()->steps.size(), 2u);
}

TEST(SessionTest, ASignatureNeedingTooLargeAnArenaIsRefused) {
  Session::Options options;
  options.max_arena_bytes = 64 << 10;
  auto session = Session::Create(Compile(DenseModel()), options);
  ASSERT_TRUE(session.ok());
  std::vector<Tensor> out;
  const Tensor small = Ramp({4, 3});
  EXPECT_TRUE((*session)->Run({&small, 1}, &out).ok());
  const Tensor large = Ramp({20000, 3});  // intermediates of 20000 × 2 floats × 2 buffers
  EXPECT_EQ((*session)->Run({&large, 1}, &out).code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE((*session)->Run({&small, 1}, &out).ok());
}

TEST(SessionTest, AHugeShapeDerivedConstantIsNotMaterializedAtPlanTime) {
  // ConstantOfShape(Shape(x) · [4096, 8192]) is known at plan time, but at x [2, 2] it is
  // 8192 × 16384 floats (512 MiB): the planner leaves it to the arena, which the limit refuses,
  // instead of filling 512 MiB while planning.
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {-1, 2});
  b.Initializer("scale", *Tensor::FromValues<int64_t>(Shape{2}, std::vector<int64_t>{4096, 8192}));
  b.Node("Shape", {"x"}, {"s"});
  b.Node("Mul", {"s", "scale"}, {"big_shape"});
  b.Node("ConstantOfShape", {"big_shape"}, {"big"});
  OnnxBuilder::SetInt(b.Node("ReduceSum", {"big"}, {"y"}), "keepdims", 0);
  b.Output("y", DataType::kFp32, {});
  Session::Options options;
  options.max_arena_bytes = size_t{64} << 20;
  auto session = Session::Create(Compile(b), options);
  ASSERT_TRUE(session.ok());
  const Tensor x = Ramp({2, 2});
  std::vector<Tensor> out;
  EXPECT_EQ((*session)->Run({&x, 1}, &out).code(), absl::StatusCode::kResourceExhausted);
}

// x [N,3,16,16] → Conv(8×3×3×3)+Relu → GlobalAveragePool → Flatten → Gemm(8×4): rows apart.
OnnxBuilder ConvModel() {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {-1, 3, 16, 16});
  b.Initializer("w", RandomTensor({8, 3, 3, 3}, 7));
  b.Initializer("fc", RandomTensor({8, 4}, 8));
  OnnxBuilder::SetInts(b.Node("Conv", {"x", "w"}, {"c"}), "pads", {1, 1, 1, 1});
  b.Node("Relu", {"c"}, {"r"});
  b.Node("GlobalAveragePool", {"r"}, {"p"});
  b.Node("Flatten", {"p"}, {"f"});
  b.Node("Gemm", {"f", "fc"}, {"y"});
  b.Output("y", DataType::kFp32, {-1, 4});
  return b;
}

TEST(SessionTest, ABatchOverTheSplitBudgetRunsInChunksWithTheSameResults) {
  const std::shared_ptr<CompiledModel> model = Compile(ConvModel());
  ASSERT_TRUE(model->rows_independent());
  Session::Options whole_options;
  whole_options.split_budget_bytes = 0;
  auto whole = Session::Create(model, whole_options);
  ASSERT_TRUE(whole.ok());
  // One row needs 8 × 16 × 16 floats (8 KiB) of conv output: a 20 KiB budget fits 2 rows.
  Session::Options split_options;
  split_options.split_budget_bytes = 20 << 10;
  auto split = Session::Create(model, split_options);
  ASSERT_TRUE(split.ok());

  const Tensor x = RandomTensor({6, 3, 16, 16}, 9);
  std::vector<Tensor> want, got;
  ASSERT_TRUE((*whole)->Run({&x, 1}, &want).ok());
  EXPECT_EQ((*whole)->last_chunk_rows(), 6);
  ASSERT_TRUE((*split)->Run({&x, 1}, &got).ok());
  EXPECT_LT((*split)->last_chunk_rows(), 6);
  EXPECT_GE((*split)->last_chunk_rows(), 1);
  EXPECT_EQ((*split)->last_run_flops(), (*whole)->last_run_flops());
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(got[0].shape(), (Shape{6, 4}));
  for (int64_t i = 0; i < 24; ++i) {
    EXPECT_NEAR(got[0].values<float>()[i], want[0].values<float>()[i], 1e-5f) << i;
  }
  // A batch that fits is not split.
  const Tensor one = RandomTensor({1, 3, 16, 16}, 10);
  ASSERT_TRUE((*split)->Run({&one, 1}, &got).ok());
  EXPECT_EQ((*split)->last_chunk_rows(), 1);
}

TEST(SessionTest, AModelWhoseRowsInteractIsNeverSplit) {
  // y = x · xᵀ with a budget far below one row: still one run over the whole batch.
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {-1, 3});
  OnnxBuilder::SetInts(b.Node("Transpose", {"x"}, {"xt"}), "perm", {1, 0});
  b.Node("MatMul", {"x", "xt"}, {"y"});
  b.Output("y", DataType::kFp32, {-1, -1});
  Session::Options options;
  options.split_budget_bytes = 1;
  auto session = Session::Create(Compile(b), options);
  ASSERT_TRUE(session.ok());
  const Tensor x = Ramp({4, 3});
  std::vector<Tensor> out;
  ASSERT_TRUE((*session)->Run({&x, 1}, &out).ok());
  EXPECT_EQ((*session)->last_chunk_rows(), 4);
  EXPECT_EQ(out[0].shape(), (Shape{4, 4}));
}

TEST(SessionTest, RunFailureNamesTheNodeAndLeavesTheSessionUsable) {
  OnnxBuilder b;
  b.Input("data", DataType::kFp32, {4});
  b.Input("idx", DataType::kInt64, {1});
  b.Node("Gather", {"data", "idx"}, {"y"}).set_name("lookup");
  b.Output("y", DataType::kFp32, {1});
  auto session = Session::Create(Compile(b), Session::Options{});
  ASSERT_TRUE(session.ok());
  const Tensor data = Ramp({4});
  std::vector<Tensor> out;
  const Tensor bad[] = {data, *Tensor::FromValues<int64_t>(Shape{1}, std::vector<int64_t>{9})};
  const absl::Status status = (*session)->Run(bad, &out);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(status.message()).find("lookup"), std::string::npos);
  const Tensor good[] = {data, *Tensor::FromValues<int64_t>(Shape{1}, std::vector<int64_t>{2})};
  ASSERT_TRUE((*session)->Run(good, &out).ok());
  EXPECT_EQ(out[0].values<float>()[0], 2.0f);
}

}  // namespace
}  // namespace brigade::engine::onnx
