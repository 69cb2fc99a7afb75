#include "engine/torch/torch_backend.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::engine {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

std::string Fixture(std::string_view name) {
  return std::string(BRIGADE_TORCH_TESTDATA_DIR) + "/" + std::string(name);
}

ModelLoadOptions Options(std::string_view file, int max_batch_size = 8) {
  ModelLoadOptions options;
  options.model_name = "m";
  options.model_path = Fixture(file);
  options.max_batch_size = max_batch_size;
  return options;
}

TensorSpec Spec(std::string name, DataType type, Shape shape) {
  return TensorSpec{std::move(name), type, std::move(shape)};
}

std::unique_ptr<ModelInstance> MakeInstance(Model& model, int threads = 1) {
  InstanceOptions options;
  options.intra_op_threads = threads;
  auto instance = model.CreateInstance(options);
  EXPECT_TRUE(instance.ok()) << instance.status();
  return instance.ok() ? *std::move(instance) : nullptr;
}

Tensor Floats(Shape shape, const std::vector<float>& values) {
  auto tensor = Tensor::FromValues<float>(std::move(shape), values);
  EXPECT_TRUE(tensor.ok()) << tensor.status();
  return *tensor;
}

Tensor Ints(Shape shape, const std::vector<int32_t>& values) {
  auto tensor = Tensor::FromValues<int32_t>(std::move(shape), values);
  EXPECT_TRUE(tensor.ok()) << tensor.status();
  return *tensor;
}

std::vector<float> Values(const Tensor& tensor) {
  auto values = tensor.values<float>();
  return {values.begin(), values.end()};
}

// linear.pt computes y = [x0, 2*x1 + 1, x0 + x1 + x2 + x3 - 1] per row.
std::vector<float> LinearRow(const float* x) {
  return {x[0], 2 * x[1] + 1, x[0] + x[1] + x[2] + x[3] - 1};
}

// Row r of the test batch: values r, r+1, r+2, r+3 scaled so rows differ in every column.
std::vector<float> BatchInput(int rows) {
  std::vector<float> values;
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < 4; ++c) values.push_back(static_cast<float>(r * 3 + c * (r + 1)));
  }
  return values;
}

TEST(TorchBackendTest, NamesFollowTriton) {
  TorchBackend backend;
  EXPECT_EQ(backend.name(), "pytorch");
  EXPECT_EQ(backend.platform(), "pytorch_libtorch");
  EXPECT_EQ(backend.default_model_filename(), "model.pt");
}

TEST(TorchBackendTest, ReadsSignatureFromExtraFileWhenConfigDeclaresNone) {
  TorchBackend backend;
  auto model = backend.Load(Options("linear.pt"));
  ASSERT_TRUE(model.ok()) << model.status();
  const ModelSignature& signature = (*model)->signature();
  EXPECT_THAT(signature.inputs, ElementsAre(Spec("x", DataType::kFp32, {-1, 4})));
  EXPECT_THAT(signature.outputs, ElementsAre(Spec("y", DataType::kFp32, {-1, 3})));
}

TEST(TorchBackendTest, ExecutesAndComputesTheModel) {
  TorchBackend backend;
  auto model = backend.Load(Options("linear.pt"));
  ASSERT_TRUE(model.ok()) << model.status();
  auto instance = MakeInstance(**model);
  ASSERT_NE(instance, nullptr);
  std::vector<Tensor> inputs = {Floats({1, 4}, {1, 2, 3, 4})};
  std::vector<Tensor> outputs;
  ASSERT_TRUE(instance->Execute(inputs, &outputs).ok());
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].dtype(), DataType::kFp32);
  EXPECT_THAT(outputs[0].shape(), ElementsAre(1, 3));
  EXPECT_THAT(Values(outputs[0]), ElementsAre(1, 5, 9));
}

TEST(TorchBackendTest, BatchedRowsEqualRowsRunAlone) {
  TorchBackend backend;
  auto model = backend.Load(Options("linear.pt"));
  ASSERT_TRUE(model.ok()) << model.status();
  auto instance = MakeInstance(**model, /*threads=*/2);
  ASSERT_NE(instance, nullptr);
  const std::vector<float> batch = BatchInput(8);
  std::vector<Tensor> outputs;
  ASSERT_TRUE(instance->Execute(std::vector<Tensor>{Floats({8, 4}, batch)}, &outputs).ok());
  ASSERT_THAT(outputs[0].shape(), ElementsAre(8, 3));
  const std::vector<float> batched = Values(outputs[0]);
  for (int r = 0; r < 8; ++r) {
    std::vector<float> row(batch.begin() + r * 4, batch.begin() + r * 4 + 4);
    std::vector<Tensor> single;
    ASSERT_TRUE(instance->Execute(std::vector<Tensor>{Floats({1, 4}, row)}, &single).ok());
    const std::vector<float> expected = LinearRow(row.data());
    EXPECT_THAT(Values(single[0]), ElementsAreArray(expected)) << "row " << r;
    EXPECT_THAT(std::vector<float>(batched.begin() + r * 3, batched.begin() + r * 3 + 3),
                ElementsAreArray(expected))
        << "row " << r;
  }
}

TEST(TorchBackendTest, DeclaredSignatureOverridesExtraFile) {
  TorchBackend backend;
  ModelLoadOptions options = Options("linear.pt");
  options.declared_inputs = {Spec("features", DataType::kFp32, {-1, 4})};
  options.declared_outputs = {Spec("scores", DataType::kFp32, {-1, 3})};
  auto model = backend.Load(options);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ((*model)->signature().inputs[0].name, "features");
  EXPECT_EQ((*model)->signature().outputs[0].name, "scores");
}

TEST(TorchBackendTest, DeclaredInputsAloneTakeOutputsFromExtraFile) {
  TorchBackend backend;
  ModelLoadOptions options = Options("linear.pt");
  options.declared_inputs = {Spec("INPUT__0", DataType::kFp32, {-1, 4})};
  auto model = backend.Load(options);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ((*model)->signature().inputs[0].name, "INPUT__0");
  EXPECT_EQ((*model)->signature().outputs[0].name, "y");
}

TEST(TorchBackendTest, DeclaredSignatureMakesABareModelLoadable) {
  TorchBackend backend;
  ModelLoadOptions options = Options("linear_bare.pt");
  options.declared_inputs = {Spec("INPUT__0", DataType::kFp32, {-1, 4})};
  options.declared_outputs = {Spec("OUTPUT__0", DataType::kFp32, {-1, 3})};
  auto model = backend.Load(options);
  ASSERT_TRUE(model.ok()) << model.status();
  auto instance = MakeInstance(**model);
  std::vector<Tensor> outputs;
  ASSERT_TRUE(instance->Execute(std::vector<Tensor>{Floats({1, 4}, {0, 0, 0, 0})}, &outputs).ok());
  EXPECT_THAT(Values(outputs[0]), ElementsAre(0, 1, -1));
}

TEST(TorchBackendTest, BareModelWithoutDeclarationsAsksForConfig) {
  TorchBackend backend;
  auto model = backend.Load(Options("linear_bare.pt"));
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(model.status().message(), HasSubstr("config.pbtxt"));
  EXPECT_THAT(model.status().message(), HasSubstr("linear_bare.pt"));
}

TEST(TorchBackendTest, TritonIndexNamesPlaceInputsByIndexNotDeclarationOrder) {
  TorchBackend backend;
  ModelLoadOptions options = Options("add_sub.pt");
  // Declared in reverse: INPUT__1 must still be forward()'s second argument (b).
  options.declared_inputs = {Spec("INPUT__1", DataType::kInt32, {-1, 2}),
                             Spec("INPUT__0", DataType::kInt32, {-1, 2})};
  options.declared_outputs = {Spec("OUTPUT__1", DataType::kInt32, {-1, 2}),
                              Spec("OUTPUT__0", DataType::kInt32, {-1, 2})};
  auto model = backend.Load(options);
  ASSERT_TRUE(model.ok()) << model.status();
  auto instance = MakeInstance(**model);
  std::vector<Tensor> outputs;
  // INPUT__1 (b) = [1, 2], INPUT__0 (a) = [10, 20].
  ASSERT_TRUE(
      instance->Execute(std::vector<Tensor>{Ints({1, 2}, {1, 2}), Ints({1, 2}, {10, 20})}, &outputs)
          .ok());
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_THAT(outputs[0].values<int32_t>(), ElementsAre(9, 18));   // OUTPUT__1 = a - b
  EXPECT_THAT(outputs[1].values<int32_t>(), ElementsAre(11, 22));  // OUTPUT__0 = a + b
}

TEST(TorchBackendTest, InputsNamedLikeForwardArgumentsBindByName) {
  TorchBackend backend;
  ModelLoadOptions options = Options("add_sub.pt");
  options.declared_inputs = {Spec("b", DataType::kInt32, {-1, 1}),
                             Spec("a", DataType::kInt32, {-1, 1})};
  options.declared_outputs = {Spec("sum", DataType::kInt32, {-1, 1}),
                              Spec("difference", DataType::kInt32, {-1, 1})};
  auto model = backend.Load(options);
  ASSERT_TRUE(model.ok()) << model.status();
  auto instance = MakeInstance(**model);
  std::vector<Tensor> outputs;
  ASSERT_TRUE(
      instance->Execute(std::vector<Tensor>{Ints({1, 1}, {3}), Ints({1, 1}, {10})}, &outputs).ok());
  EXPECT_THAT(outputs[1].values<int32_t>(), ElementsAre(7));  // a - b with a = 10, b = 3
}

TEST(TorchBackendTest, ArgumentWithDefaultNeedsNoInput) {
  TorchBackend backend;
  ModelLoadOptions options = Options("scaled.pt");
  options.declared_inputs = {Spec("x", DataType::kFp32, {-1, 2})};
  options.declared_outputs = {Spec("y", DataType::kFp32, {-1, 2})};
  auto model = backend.Load(options);
  ASSERT_TRUE(model.ok()) << model.status();
  auto instance = MakeInstance(**model);
  std::vector<Tensor> outputs;
  ASSERT_TRUE(instance->Execute(std::vector<Tensor>{Floats({1, 2}, {1.5, -2})}, &outputs).ok());
  EXPECT_THAT(Values(outputs[0]), ElementsAre(3, -4));
}

TEST(TorchBackendTest, AnOmittedOptionalInputRunsWithForwardsDefault) {
  TorchBackend backend;
  ModelLoadOptions options = Options("masked.pt");
  options.declared_inputs = {Spec("x", DataType::kFp32, {-1, 2}),
                             Spec("mask", DataType::kFp32, {-1, 2})};
  options.declared_inputs[1].optional = true;
  options.declared_outputs = {Spec("y", DataType::kFp32, {-1, 2})};
  auto model = backend.Load(options);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_FALSE((*model)->signature().inputs[0].optional);
  EXPECT_TRUE((*model)->signature().inputs[1].optional);
  auto instance = MakeInstance(**model);
  std::vector<Tensor> outputs;
  // Without a mask forward() adds 100; with one it multiplies.
  ASSERT_TRUE(
      instance->Execute(std::vector<Tensor>{Floats({1, 2}, {1.5, -2}), Tensor()}, &outputs).ok());
  EXPECT_THAT(Values(outputs[0]), ElementsAre(101.5, 98));
  ASSERT_TRUE(instance
                  ->Execute(std::vector<Tensor>{Floats({1, 2}, {1.5, -2}), Floats({1, 2}, {2, 0})},
                            &outputs)
                  .ok());
  EXPECT_THAT(Values(outputs[0]), ElementsAre(3, 0));
}

TEST(TorchBackendTest, AnOptionalInputWhoseArgumentHasNoDefaultIsRefusedAtLoad) {
  TorchBackend backend;
  ModelLoadOptions options = Options("masked.pt");
  options.model_name = "masked";
  options.declared_inputs = {Spec("x", DataType::kFp32, {-1, 2}),
                             Spec("mask", DataType::kFp32, {-1, 2})};
  options.declared_inputs[0].optional = true;
  options.declared_outputs = {Spec("y", DataType::kFp32, {-1, 2})};
  auto model = backend.Load(options);
  ASSERT_EQ(model.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(model.status().message(), HasSubstr("model 'masked'"));
  EXPECT_THAT(model.status().message(), HasSubstr("input 'x' is optional"));
  EXPECT_THAT(model.status().message(), HasSubstr("has no default"));
}

TEST(TorchBackendTest, NonTensorArgumentIsRefusedAtLoad) {
  TorchBackend backend;
  ModelLoadOptions options = Options("scaled.pt");
  options.declared_inputs = {Spec("x", DataType::kFp32, {-1, 2}),
                             Spec("scale", DataType::kFp32, {-1, 1})};
  options.declared_outputs = {Spec("y", DataType::kFp32, {-1, 2})};
  auto model = backend.Load(options);
  ASSERT_FALSE(model.ok());
  EXPECT_THAT(model.status().message(), HasSubstr("'scale'"));
  EXPECT_THAT(model.status().message(), HasSubstr("not a Tensor"));
}

TEST(TorchBackendTest, MoreInputsThanForwardArgumentsIsRefusedAtLoad) {
  TorchBackend backend;
  ModelLoadOptions options = Options("linear_bare.pt");
  options.declared_inputs = {Spec("a", DataType::kFp32, {-1, 4}),
                             Spec("b", DataType::kFp32, {-1, 4})};
  options.declared_outputs = {Spec("y", DataType::kFp32, {-1, 3})};
  auto model = backend.Load(options);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(model.status().message(), HasSubstr("2 inputs declared"));
}

TEST(TorchBackendTest, OutputAliasingInputOutlivesTheInput) {
  TorchBackend backend;
  ModelLoadOptions options = Options("identity.pt");
  options.declared_inputs = {Spec("x", DataType::kFp32, {-1, 3})};
  options.declared_outputs = {Spec("y", DataType::kFp32, {-1, 3})};
  auto model = backend.Load(options);
  ASSERT_TRUE(model.ok()) << model.status();
  auto instance = MakeInstance(**model);
  std::vector<Tensor> outputs;
  {
    std::vector<Tensor> inputs = {Floats({1, 3}, {4, 5, 6})};
    ASSERT_TRUE(instance->Execute(inputs, &outputs).ok());
    EXPECT_EQ(outputs[0].data(), inputs[0].data()) << "identity output should not be a copy";
  }
  // The input vector is gone; the output still owns the storage it aliases.
  EXPECT_THAT(Values(outputs[0]), ElementsAre(4, 5, 6));
}

TEST(TorchBackendTest, NonContiguousResultIsMadeContiguous) {
  TorchBackend backend;
  ModelLoadOptions options = Options("transposed.pt");
  options.declared_inputs = {Spec("x", DataType::kFp32, {-1, 3})};
  options.declared_outputs = {Spec("y", DataType::kFp32, {-1, 3})};
  auto model = backend.Load(options);
  ASSERT_TRUE(model.ok()) << model.status();
  auto instance = MakeInstance(**model);
  std::vector<Tensor> outputs;
  ASSERT_TRUE(
      instance->Execute(std::vector<Tensor>{Floats({2, 3}, {1, 2, 3, 4, 5, 6})}, &outputs).ok());
  EXPECT_THAT(outputs[0].shape(), ElementsAre(2, 3));
  EXPECT_THAT(Values(outputs[0]), ElementsAre(2, 3, 4, 5, 6, 7));
}

TEST(TorchBackendTest, MissingFileIsNotFound) {
  TorchBackend backend;
  auto model = backend.Load(Options("no_such_model.pt"));
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(model.status().message(), HasSubstr("model 'm'"));
  EXPECT_THAT(model.status().message(), HasSubstr("no_such_model.pt"));
}

TEST(TorchBackendTest, DirectoryIsNotAModelFile) {
  TorchBackend backend;
  ModelLoadOptions options = Options("");
  options.model_path = BRIGADE_TORCH_TESTDATA_DIR;
  auto model = backend.Load(options);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), absl::StatusCode::kInvalidArgument);
}

class TempFile {
 public:
  explicit TempFile(std::string_view contents)
      : path_(std::filesystem::temp_directory_path() /
              ("brigade_torch_test_" + std::to_string(::getpid()) + "_" +
               std::to_string(counter_++) + ".pt")) {
    std::ofstream(path_, std::ios::binary) << contents;
  }
  ~TempFile() { std::filesystem::remove(path_); }
  std::string path() const { return path_.string(); }

 private:
  static inline int counter_ = 0;
  std::filesystem::path path_;
};

TEST(TorchBackendTest, GarbageFileIsInvalidArgumentNotACrash) {
  for (std::string_view contents : {std::string_view(""), std::string_view("garbage bytes"),
                                    std::string_view("PK\x03\x04 truncated zip")}) {
    TempFile file(contents);
    TorchBackend backend;
    ModelLoadOptions options = Options("");
    options.model_path = file.path();
    auto model = backend.Load(options);
    ASSERT_FALSE(model.ok()) << "contents: " << contents;
    EXPECT_EQ(model.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(model.status().message(), HasSubstr("not a loadable TorchScript module"));
    EXPECT_THAT(model.status().message(), HasSubstr(file.path()));
  }
}

TEST(TorchBackendTest, PickledStateDictIsNotTorchScript) {
  TorchBackend backend;
  auto model = backend.Load(Options("state_dict.pt"));
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(model.status().message(), HasSubstr("torch.jit.save"));
}

TEST(TorchBackendTest, MalformedSignatureFileIsReported) {
  TorchBackend backend;
  auto model = backend.Load(Options("bad_signature.pt"));
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(model.status().message(), HasSubstr("brigade/signature.json"));
}

TEST(TorchBackendTest, MalformedSignatureFileIsIgnoredWhenConfigDeclaresEverything) {
  TorchBackend backend;
  ModelLoadOptions options = Options("bad_signature.pt");
  options.declared_inputs = {Spec("x", DataType::kFp32, {-1, 4})};
  options.declared_outputs = {Spec("y", DataType::kFp32, {-1, 3})};
  EXPECT_TRUE(backend.Load(options).ok());
}

TEST(TorchBackendTest, NonTensorReturnTypeIsRefusedAtLoad) {
  TorchBackend backend;
  ModelLoadOptions options = Options("returns_int.pt");
  options.declared_inputs = {Spec("x", DataType::kFp32, {-1, 1})};
  options.declared_outputs = {Spec("y", DataType::kFp32, {-1, 1})};
  auto model = backend.Load(options);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(model.status().message(), HasSubstr("forward() returns int"));
}

TEST(TorchBackendTest, MoreOutputsThanTupleElementsIsRefusedAtLoad) {
  TorchBackend backend;
  ModelLoadOptions options = Options("add_sub.pt");
  options.declared_inputs = {Spec("a", DataType::kInt32, {-1}), Spec("b", DataType::kInt32, {-1})};
  options.declared_outputs = {Spec("OUTPUT__0", DataType::kInt32, {-1}),
                              Spec("OUTPUT__2", DataType::kInt32, {-1})};
  auto model = backend.Load(options);
  ASSERT_FALSE(model.ok());
  EXPECT_THAT(model.status().message(), HasSubstr("'OUTPUT__2' takes result 2"));
}

class LoadedLinear : public ::testing::Test {
 protected:
  void SetUp() override {
    auto model = backend_.Load(Options("linear.pt", /*max_batch_size=*/4));
    ASSERT_TRUE(model.ok()) << model.status();
    model_ = *std::move(model);
    instance_ = MakeInstance(*model_);
    ASSERT_NE(instance_, nullptr);
  }

  absl::Status Run(std::vector<Tensor> inputs) { return instance_->Execute(inputs, &outputs_); }

  TorchBackend backend_;
  std::shared_ptr<Model> model_;
  std::unique_ptr<ModelInstance> instance_;
  std::vector<Tensor> outputs_;
};

TEST_F(LoadedLinear, WrongInputCountIsInvalidArgument) {
  absl::Status status = Run({Floats({1, 4}, {1, 2, 3, 4}), Floats({1, 4}, {1, 2, 3, 4})});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("expected 1 input(s) (x), got 2"));
  EXPECT_THAT(status.message(), HasSubstr("model 'm'"));
  EXPECT_EQ(Run({}).code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(LoadedLinear, WrongInputTypeIsInvalidArgumentNamingTheInput) {
  absl::Status status = Run({Ints({1, 4}, {1, 2, 3, 4})});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("input 'x': expected FP32, got INT32"));
}

TEST_F(LoadedLinear, WrongInputShapeIsInvalidArgument) {
  absl::Status status = Run({Floats({1, 3}, {1, 2, 3})});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("[1,3] does not match [-1,4]"));
}

TEST_F(LoadedLinear, BatchAboveMaxBatchSizeIsInvalidArgument) {
  absl::Status status = Run({Floats({5, 4}, std::vector<float>(20, 1.0f))});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("exceeds max_batch_size 4"));
}

TEST_F(LoadedLinear, InstanceStaysUsableAfterAnError) {
  EXPECT_FALSE(Run({Ints({1, 4}, {1, 2, 3, 4})}).ok());
  EXPECT_TRUE(outputs_.empty());
  ASSERT_TRUE(Run({Floats({1, 4}, {1, 1, 1, 1})}).ok());
  EXPECT_THAT(Values(outputs_[0]), ElementsAre(1, 3, 3));
}

TEST_F(LoadedLinear, ExecuteOnAnotherThreadStillComputes) {
  absl::Status status;
  std::thread other([&] { status = Run({Floats({2, 4}, {1, 1, 1, 1, 0, 0, 0, 0})}); });
  other.join();
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_THAT(Values(outputs_[0]), ElementsAre(1, 3, 3, 0, 1, -1));
}

TEST(TorchBackendTest, OutputTypeDifferentFromSignatureIsInternal) {
  TorchBackend backend;
  ModelLoadOptions options = Options("linear.pt");
  options.declared_outputs = {Spec("y", DataType::kFp64, {-1, 3})};
  auto model = backend.Load(options);
  ASSERT_TRUE(model.ok()) << model.status();
  auto instance = MakeInstance(**model);
  std::vector<Tensor> outputs;
  absl::Status status =
      instance->Execute(std::vector<Tensor>{Floats({1, 4}, {1, 2, 3, 4})}, &outputs);
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(status.message(), HasSubstr("output 'y': forward() produced FP32"));
}

TEST(TorchBackendTest, OutputShapeDifferentFromSignatureIsInternal) {
  TorchBackend backend;
  ModelLoadOptions options = Options("linear.pt");
  options.declared_outputs = {Spec("y", DataType::kFp32, {-1, 5})};
  auto model = backend.Load(options);
  ASSERT_TRUE(model.ok()) << model.status();
  auto instance = MakeInstance(**model);
  std::vector<Tensor> outputs;
  absl::Status status =
      instance->Execute(std::vector<Tensor>{Floats({1, 4}, {1, 2, 3, 4})}, &outputs);
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(status.message(), HasSubstr("produced shape [1,3]"));
}

TEST(TorchBackendTest, ListResultWithFewerTensorsThanOutputsIsInternal) {
  TorchBackend backend;
  ModelLoadOptions options = Options("returns_list.pt");
  options.declared_inputs = {Spec("x", DataType::kFp32, {-1, 1})};
  options.declared_outputs = {Spec("a", DataType::kFp32, {-1, 1}),
                              Spec("b", DataType::kFp32, {-1, 1}),
                              Spec("c", DataType::kFp32, {-1, 1})};
  auto model = backend.Load(options);
  ASSERT_TRUE(model.ok()) << model.status();
  auto instance = MakeInstance(**model);
  std::vector<Tensor> outputs;
  absl::Status status = instance->Execute(std::vector<Tensor>{Floats({1, 1}, {1})}, &outputs);
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(status.message(), HasSubstr("forward() returned 2 tensor(s)"));
}

TEST(TorchBackendTest, ExceptionInForwardIsInternalAndInstanceRecovers) {
  TorchBackend backend;
  ModelLoadOptions options = Options("raises.pt");
  options.declared_inputs = {Spec("x", DataType::kFp32, {-1, 1})};
  options.declared_outputs = {Spec("y", DataType::kFp32, {-1, 1})};
  auto model = backend.Load(options);
  ASSERT_TRUE(model.ok()) << model.status();
  auto instance = MakeInstance(**model);
  std::vector<Tensor> outputs;
  absl::Status status = instance->Execute(std::vector<Tensor>{Floats({1, 1}, {-1})}, &outputs);
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(status.message(), HasSubstr("negative input"));
  EXPECT_TRUE(instance->Execute(std::vector<Tensor>{Floats({1, 1}, {2})}, &outputs).ok());
}

TEST(TorchBackendTest, UnbatchedModelTakesAnyDeclaredShape) {
  TorchBackend backend;
  ModelLoadOptions options = Options("linear.pt", /*max_batch_size=*/0);
  options.declared_inputs = {Spec("x", DataType::kFp32, {2, 4})};
  options.declared_outputs = {Spec("y", DataType::kFp32, {2, 3})};
  auto model = backend.Load(options);
  ASSERT_TRUE(model.ok()) << model.status();
  auto instance = MakeInstance(**model);
  std::vector<Tensor> outputs;
  EXPECT_TRUE(
      instance->Execute(std::vector<Tensor>{Floats({2, 4}, {0, 0, 0, 0, 1, 1, 1, 1})}, &outputs)
          .ok());
  EXPECT_EQ(instance->Execute(std::vector<Tensor>{Floats({1, 4}, {0, 0, 0, 0})}, &outputs).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(TorchBackendTest, TypeWithoutTorchEquivalentIsRefusedAtLoad) {
  TorchBackend backend;
  ModelLoadOptions options = Options("linear.pt");
  options.declared_inputs = {Spec("x", DataType::kUint32, {-1, 4})};
  auto model = backend.Load(options);
  ASSERT_FALSE(model.ok());
  EXPECT_THAT(model.status().message(), HasSubstr("input 'x' has type UINT32"));
}

TEST(TorchBackendTest, ZeroIntraOpThreadsIsRefused) {
  TorchBackend backend;
  auto model = backend.Load(Options("linear.pt"));
  ASSERT_TRUE(model.ok()) << model.status();
  InstanceOptions options;
  options.intra_op_threads = 0;
  EXPECT_EQ((*model)->CreateInstance(options).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(TorchBackendTest, InstanceOutlivesItsModel) {
  TorchBackend backend;
  std::unique_ptr<ModelInstance> instance;
  {
    auto model = backend.Load(Options("linear.pt"));
    ASSERT_TRUE(model.ok()) << model.status();
    instance = MakeInstance(**model);
  }
  std::vector<Tensor> outputs;
  ASSERT_TRUE(instance->Execute(std::vector<Tensor>{Floats({1, 4}, {1, 2, 3, 4})}, &outputs).ok());
  EXPECT_THAT(Values(outputs[0]), ElementsAre(1, 5, 9));
}

TEST(TorchBackendTest, WarmupInputsFromTheSignatureRun) {
  TorchBackend backend;
  auto model = backend.Load(Options("linear.pt"));
  ASSERT_TRUE(model.ok()) << model.status();
  auto instance = MakeInstance(**model);
  auto inputs = MakeWarmupInputs((*model)->signature(), 8);
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  std::vector<Tensor> outputs;
  ASSERT_TRUE(instance->Execute(*inputs, &outputs).ok());
  EXPECT_THAT(outputs[0].shape(), ElementsAre(8, 3));
}

}  // namespace
}  // namespace brigade::engine
