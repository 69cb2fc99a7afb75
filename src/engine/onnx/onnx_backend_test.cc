#include "engine/onnx/onnx_backend.h"

#include <filesystem>
#include <fstream>

#include "engine/onnx/kernels/cpu_isa.h"
#include "engine/onnx/test_util/onnx_builder.h"
#include "gtest/gtest.h"

namespace brigade::engine {
namespace {

namespace fs = std::filesystem;
using onnx::OnnxBuilder;
using onnx::Ramp;

class OnnxBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("brigade_onnx_backend_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const OnnxBuilder& b) {
    const fs::path path = dir_ / "model.onnx";
    std::ofstream(path, std::ios::binary) << b.Serialize();
    return path.string();
  }

  // logits = x · w + b with x [batch, 4], w [4, 3].
  static OnnxBuilder Classifier() {
    OnnxBuilder b;
    b.Input("x", DataType::kFp32, {-1, 4});
    b.Initializer("w", Ramp({4, 3}, -0.5f, 0.1f));
    b.Initializer("b", Ramp({3}, 1.0f, 1.0f));
    b.Node("Gemm", {"x", "w", "b"}, {"logits"});
    b.Output("logits", DataType::kFp32, {-1, 3});
    return b;
  }

  fs::path dir_;
};

std::vector<float> Values(const Tensor& tensor) {
  return {tensor.values<float>().begin(), tensor.values<float>().end()};
}

TEST_F(OnnxBackendTest, AnOmittedOptionalInputRunsWithItsInitializer) {
  OnnxBackend backend;
  ModelLoadOptions options;
  options.model_name = "add_bias";
  options.model_path = Write(onnx::AddBiasGraph());
  options.max_batch_size = 8;
  options.declared_inputs = {TensorSpec{"x", DataType::kFp32, Shape{-1, 4}},
                             TensorSpec{"bias", DataType::kFp32, Shape{-1, 4}, true}};
  auto model = backend.Load(options);
  ASSERT_TRUE(model.ok()) << model.status();
  const ModelSignature& sig = (*model)->signature();
  ASSERT_EQ(sig.inputs.size(), 2u);
  EXPECT_FALSE(sig.inputs[0].optional);
  EXPECT_EQ(sig.inputs[1].name, "bias");
  EXPECT_TRUE(sig.inputs[1].optional);
  auto instance = (*model)->CreateInstance({});
  ASSERT_TRUE(instance.ok()) << instance.status();

  const Tensor x = Ramp({2, 4}, 0.0f, 1.0f);
  std::vector<Tensor> outputs;
  const std::vector<Tensor> omitted = {x, Tensor()};
  ASSERT_TRUE((*instance)->Execute(omitted, &outputs).ok());
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(Values(outputs[0]), (std::vector<float>{10, 12, 14, 16, 14, 16, 18, 20}));

  const std::vector<Tensor> given = {x, Ramp({2, 4}, 100.0f, 0.0f)};
  ASSERT_TRUE((*instance)->Execute(given, &outputs).ok());
  EXPECT_EQ(Values(outputs[0]), (std::vector<float>{100, 101, 102, 103, 104, 105, 106, 107}));
}

TEST_F(OnnxBackendTest, AnUndeclaredInitializerInputStaysAConstant) {
  OnnxBackend backend;
  ModelLoadOptions options;
  options.model_name = "add_bias";
  options.model_path = Write(onnx::AddBiasGraph());
  auto model = backend.Load(options);
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_EQ((*model)->signature().inputs.size(), 1u);
  auto instance = (*model)->CreateInstance({});
  ASSERT_TRUE(instance.ok()) << instance.status();
  const Tensor x = Ramp({1, 4}, 0.0f, 1.0f);
  std::vector<Tensor> outputs;
  ASSERT_TRUE((*instance)->Execute({&x, 1}, &outputs).ok());
  EXPECT_EQ(Values(outputs[0]), (std::vector<float>{10, 12, 14, 16}));
}

TEST_F(OnnxBackendTest, AnOptionalInputWithoutAnInitializerIsRefusedAtLoad) {
  OnnxBackend backend;
  ModelLoadOptions options;
  options.model_name = "add_bias";
  options.model_path = Write(onnx::AddBiasGraph());
  options.declared_inputs = {TensorSpec{"x", DataType::kFp32, Shape{-1, 4}, true}};
  auto model = backend.Load(options);
  EXPECT_EQ(model.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(model.status().message());
  EXPECT_NE(message.find("model 'add_bias'"), std::string::npos) << message;
  EXPECT_NE(message.find("input 'x'"), std::string::npos) << message;
  EXPECT_NE(message.find("no initializer"), std::string::npos) << message;
}

TEST_F(OnnxBackendTest, NamesMatchTriton) {
  OnnxBackend backend;
  EXPECT_EQ(backend.platform(), "onnxruntime_onnx");
  EXPECT_EQ(backend.name(), "onnxruntime");
  EXPECT_EQ(backend.default_model_filename(), "model.onnx");
}

TEST_F(OnnxBackendTest, LoadsReportsSignatureAndExecutesBatches) {
  OnnxBackend backend;
  ModelLoadOptions options;
  options.model_name = "clf";
  options.model_path = Write(Classifier());
  options.max_batch_size = 8;
  auto model = backend.Load(options);
  ASSERT_TRUE(model.ok()) << model.status();
  const ModelSignature& sig = (*model)->signature();
  ASSERT_EQ(sig.inputs.size(), 1u);
  EXPECT_EQ(sig.inputs[0].name, "x");
  EXPECT_EQ(sig.inputs[0].dtype, DataType::kFp32);
  EXPECT_EQ(sig.inputs[0].shape, (Shape{-1, 4}));
  ASSERT_EQ(sig.outputs.size(), 1u);
  EXPECT_EQ(sig.outputs[0].name, "logits");

  InstanceOptions instance_options;
  instance_options.intra_op_threads = 2;
  auto instance = (*model)->CreateInstance(instance_options);
  ASSERT_TRUE(instance.ok()) << instance.status();
  const Tensor x = Ramp({2, 4}, 1.0f, 1.0f);
  std::vector<Tensor> outputs;
  ASSERT_TRUE((*instance)->Execute({&x, 1}, &outputs).ok());
  ASSERT_EQ(outputs.size(), 1u);
  ASSERT_EQ(outputs[0].shape(), (Shape{2, 3}));
  // Row 0: [1,2,3,4] · w + b, w[k][j] = -0.5 + 0.1 * (3k + j), b = [1,2,3].
  for (int j = 0; j < 3; ++j) {
    float want = 1.0f + static_cast<float>(j);
    for (int k = 0; k < 4; ++k) {
      want += static_cast<float>(k + 1) * (-0.5f + 0.1f * static_cast<float>(3 * k + j));
    }
    EXPECT_NEAR(outputs[0].values<float>()[j], want, 1e-5f);
  }
}

TEST_F(OnnxBackendTest, PrecisionComesFromTheConfigElseTheFileAndABadOneFailsTheLoad) {
  // logits = x · w with x [batch, 64], w [64, 8] random: bf16 rounding shows in the sums.
  auto model_with = [](const std::string& metadata) {
    OnnxBuilder b;
    b.Input("x", DataType::kFp32, {-1, 64});
    b.Initializer("w", onnx::RandomTensor({64, 8}, 3));
    b.Node("MatMul", {"x", "w"}, {"logits"});
    b.Output("logits", DataType::kFp32, {-1, 8});
    if (!metadata.empty()) {
      auto* entry = b.model().add_metadata_props();
      entry->set_key("brigade.precision");
      entry->set_value(metadata);
    }
    return b;
  };
  OnnxBackend backend;
  const Tensor x = onnx::RandomTensor({2, 64}, 4);
  auto run = [&](const OnnxBuilder& b, const std::string& parameter) -> absl::StatusOr<Tensor> {
    ModelLoadOptions options;
    options.model_name = "clf";
    options.model_path = Write(b);
    options.max_batch_size = 8;
    if (!parameter.empty()) options.parameters["precision"] = parameter;
    auto model = backend.Load(options);
    if (!model.ok()) return model.status();
    auto instance = (*model)->CreateInstance(InstanceOptions{});
    if (!instance.ok()) return instance.status();
    std::vector<Tensor> outputs;
    if (auto status = (*instance)->Execute({&x, 1}, &outputs); !status.ok()) return status;
    return std::move(outputs[0]);
  };
  auto fp32 = run(model_with(""), "");
  auto from_config = run(model_with(""), "bf16");
  auto from_file = run(model_with("bf16"), "");
  auto config_wins = run(model_with("bf16"), "fp32");
  ASSERT_TRUE(fp32.ok() && from_config.ok() && from_file.ok() && config_wins.ok());
  EXPECT_EQ(Values(*config_wins), Values(*fp32));
  EXPECT_EQ(Values(*from_file), Values(*from_config));
  if (onnx::CpuMultipliesBf16()) {
    EXPECT_NE(Values(*from_config), Values(*fp32));
  } else {
    EXPECT_EQ(Values(*from_config), Values(*fp32));  // fp32 fallback (logged)
  }

  auto bad_parameter = run(model_with(""), "fp16");
  EXPECT_EQ(bad_parameter.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad_parameter.status().message().find("parameter 'precision': 'fp16'"),
            std::string::npos)
      << bad_parameter.status();
  auto bad_metadata = run(model_with("int4"), "");
  EXPECT_EQ(bad_metadata.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad_metadata.status().message().find("'brigade.precision': 'int4'"), std::string::npos)
      << bad_metadata.status();
}

TEST_F(OnnxBackendTest, ConfigContradictingTheModelIsRejected) {
  OnnxBackend backend;
  ModelLoadOptions options;
  options.model_name = "clf";
  options.model_path = Write(Classifier());
  options.declared_inputs = {TensorSpec{"x", DataType::kInt32, Shape{-1, 4}}};
  auto model = backend.Load(options);
  EXPECT_EQ(model.status().code(), absl::StatusCode::kInvalidArgument);
  options.declared_inputs = {TensorSpec{"image", DataType::kFp32, Shape{-1, 4}}};
  model = backend.Load(options);
  EXPECT_EQ(model.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(model.status().message()).find("image"), std::string::npos);
}

TEST_F(OnnxBackendTest, MissingFileIsNotFoundAndCorruptFileIsInvalid) {
  OnnxBackend backend;
  ModelLoadOptions options;
  options.model_name = "m";
  options.model_path = (dir_ / "absent.onnx").string();
  EXPECT_EQ(backend.Load(options).status().code(), absl::StatusCode::kNotFound);
  const fs::path corrupt = dir_ / "model.onnx";
  std::ofstream(corrupt, std::ios::binary) << "this is not a protobuf \xff\xfe";
  options.model_path = corrupt.string();
  EXPECT_EQ(backend.Load(options).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(OnnxBackendTest, InstancesOutliveTheModel) {
  OnnxBackend backend;
  ModelLoadOptions options;
  options.model_name = "clf";
  options.model_path = Write(Classifier());
  std::unique_ptr<ModelInstance> instance;
  {
    auto model = backend.Load(options);
    ASSERT_TRUE(model.ok());
    auto created = (*model)->CreateInstance(InstanceOptions{});
    ASSERT_TRUE(created.ok());
    instance = std::move(*created);
  }
  const Tensor x = Ramp({1, 4});
  std::vector<Tensor> outputs;
  EXPECT_TRUE(instance->Execute({&x, 1}, &outputs).ok());
}

TEST_F(OnnxBackendTest, ServesAModelWithLoopAndIf) {
  // What torch.jit.script exports for control flow (bench/models/make_models.py control_flow,
  // in small): h = x; for _ in range(x.shape[1]): h = h + w; then 2·h if mean(h) > 0 else -h.
  OnnxBuilder body;
  body.Input("i", DataType::kInt64, {});
  body.Input("cond_in", DataType::kBool, {});
  body.Input("h", DataType::kFp32, {-1, 4});
  body.Node("Add", {"h", "w"}, {"h_out"});
  body.Node("Identity", {"go"}, {"cond_out"});
  body.Output("cond_out", DataType::kBool, {});
  body.Output("h_out", DataType::kFp32, {-1, 4});
  OnnxBuilder then_branch;
  then_branch.Node("Mul", {"h_end", "two"}, {"then_y"});
  then_branch.Output("then_y", DataType::kFp32, {-1, 4});
  OnnxBuilder else_branch;
  else_branch.Node("Neg", {"h_end"}, {"else_y"});
  else_branch.Output("else_y", DataType::kFp32, {-1, 4});
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {-1, 4});
  b.Initializer("w", Ramp({4}, 0.25f, 0.0f));
  b.Initializer("two", *Tensor::FromValues<float>(Shape{}, std::vector<float>{2}));
  b.Initializer("zero", *Tensor::FromValues<float>(Shape{}, std::vector<float>{0}));
  const bool go = true;
  b.Initializer("go", *Tensor::FromValues<bool>(Shape{}, std::span<const bool>(&go, 1)));
  b.Initializer("one", *Tensor::FromValues<int64_t>(Shape{}, std::vector<int64_t>{1}));
  b.Node("Shape", {"x"}, {"shape"});
  OnnxBuilder::SetInt(b.Node("Gather", {"shape", "one"}, {"trip"}), "axis", 0);
  OnnxBuilder::SetGraph(b.Node("Loop", {"trip", "go", "x"}, {"h_end"}), "body", body);
  OnnxBuilder::SetInt(b.Node("ReduceMean", {"h_end"}, {"mean"}), "keepdims", 0);
  b.Node("Greater", {"mean", "zero"}, {"positive"});
  auto& branch = b.Node("If", {"positive"}, {"y"});
  OnnxBuilder::SetGraph(branch, "then_branch", then_branch);
  OnnxBuilder::SetGraph(branch, "else_branch", else_branch);
  b.Output("y", DataType::kFp32, {-1, 4});

  OnnxBackend backend;
  ModelLoadOptions options;
  options.model_name = "control_flow";
  options.model_path = Write(b);
  options.max_batch_size = 8;
  auto model = backend.Load(options);
  ASSERT_TRUE(model.ok()) << model.status();
  auto instance = (*model)->CreateInstance(InstanceOptions{});
  ASSERT_TRUE(instance.ok()) << instance.status();
  // Four iterations add 1 to every element: mean(x) + 1 decides the branch.
  for (float start : {0.5f, -3.0f}) {
    const Tensor x = Ramp({2, 4}, start, 0.0f);
    std::vector<Tensor> outputs;
    ASSERT_TRUE((*instance)->Execute({&x, 1}, &outputs).ok());
    ASSERT_EQ(outputs.size(), 1u);
    ASSERT_EQ(outputs[0].shape(), (Shape{2, 4}));
    const float h = start + 1.0f;
    EXPECT_EQ(Values(outputs[0]), std::vector<float>(8, h > 0 ? 2 * h : -h)) << "x = " << start;
  }
}

}  // namespace
}  // namespace brigade::engine
