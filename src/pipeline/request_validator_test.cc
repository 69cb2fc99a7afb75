#include "pipeline/request_validator.h"

#include "engine/builtin/builtin_backend.h"
#include "gtest/gtest.h"
#ifdef BRIGADE_HAVE_ONNX
#include "engine/onnx/onnx_backend.h"
#include "engine/onnx/test_util/onnx_builder.h"
#endif
#include "core/strings.h"
#include "protocol/model_config_parser.h"
#include "testing/temp_repository.h"

namespace brigade::pipeline {
namespace {

class RequestValidatorTest : public ::testing::Test {
 protected:
  std::shared_ptr<repository::ModelVersion> Load(std::string_view name, std::string_view text) {
    temp_.AddModel(name, text);
    auto parsed = protocol::ParseModelConfigText(text, "config");
    EXPECT_TRUE(parsed.ok());
    EXPECT_TRUE(protocol::ValidateModelConfig(name, &parsed->config).ok());
    repository::ModelVersion::Options options;
    options.model_dir = temp_.path() + "/" + std::string(name);
    options.config = parsed->config;
    options.backends = &backends_;
    options.pin_threads = false;
    auto model = repository::ModelVersion::Load(options);
    EXPECT_TRUE(model.ok()) << model.status();
    return *model;
  }

  void SetUp() override {
    backends_.Register(std::make_unique<engine::BuiltinBackend>());
    add_sub_ = Load("simple", testing::kAddSubConfig);
  }

  static InferRequest Request(std::vector<std::pair<std::string, Tensor>> inputs) {
    InferRequest request;
    for (auto& [name, tensor] : inputs) request.inputs.push_back({name, tensor, {}});
    return request;
  }

  static Tensor Int32(Shape shape) { return *Tensor::Zeros(DataType::kInt32, shape); }

  static void ExpectInvalid(const repository::ModelVersion& model, InferRequest& request,
                            std::string_view fragment) {
    const absl::Status status = PrepareRequest(model, &request);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_NE(std::string(status.message()).find(fragment), std::string::npos) << status;
  }

  testing::TempRepository temp_;
  engine::BackendRegistry backends_;
  std::shared_ptr<repository::ModelVersion> add_sub_;
};

TEST_F(RequestValidatorTest, InputsAreReorderedToTheModelsOrder) {
  InferRequest request = Request({{"INPUT1", Int32({2, 16})}, {"INPUT0", Int32({2, 16})}});
  ASSERT_TRUE(PrepareRequest(*add_sub_, &request).ok());
  EXPECT_EQ(request.inputs[0].name, "INPUT0");
  EXPECT_EQ(request.inputs[1].name, "INPUT1");
}

TEST_F(RequestValidatorTest, MissingUnknownAndRepeatedInputsAreNamed) {
  InferRequest missing = Request({{"INPUT0", Int32({1, 16})}});
  ExpectInvalid(*add_sub_, missing, "missing input 'INPUT1'");
  InferRequest unknown =
      Request({{"INPUT0", Int32({1, 16})}, {"INPUT1", Int32({1, 16})}, {"INPUT9", Int32({1, 16})}});
  ExpectInvalid(*add_sub_, unknown, "no input named 'INPUT9'");
  InferRequest twice = Request({{"INPUT0", Int32({1, 16})}, {"INPUT0", Int32({1, 16})}});
  ExpectInvalid(*add_sub_, twice, "'INPUT0' is given more than once");
}

TEST_F(RequestValidatorTest, WrongDatatypeOrShapeIsNamed) {
  InferRequest dtype =
      Request({{"INPUT0", *Tensor::Zeros(DataType::kFp32, {1, 16})}, {"INPUT1", Int32({1, 16})}});
  ExpectInvalid(*add_sub_, dtype, "expected datatype INT32, got FP32");
  InferRequest shape = Request({{"INPUT0", Int32({1, 15})}, {"INPUT1", Int32({1, 16})}});
  ExpectInvalid(*add_sub_, shape, "expected shape [-1,16], got [1,15]");
  InferRequest rank = Request({{"INPUT0", Int32({16})}, {"INPUT1", Int32({16})}});
  ExpectInvalid(*add_sub_, rank, "expected shape [-1,16], got [16]");
}

TEST_F(RequestValidatorTest, BatchSizeMustFitAndAgree) {
  InferRequest too_big = Request({{"INPUT0", Int32({9, 16})}, {"INPUT1", Int32({9, 16})}});
  ExpectInvalid(*add_sub_, too_big, "batch size 9 is outside [1, max_batch_size=8]");
  InferRequest zero = Request({{"INPUT0", Int32({0, 16})}, {"INPUT1", Int32({0, 16})}});
  ExpectInvalid(*add_sub_, zero, "batch size 0");
  InferRequest disagree = Request({{"INPUT0", Int32({2, 16})}, {"INPUT1", Int32({3, 16})}});
  ExpectInvalid(*add_sub_, disagree, "differs from the other inputs");
}

TEST_F(RequestValidatorTest, RequestedOutputsMustExistOnce) {
  InferRequest request = Request({{"INPUT0", Int32({1, 16})}, {"INPUT1", Int32({1, 16})}});
  request.outputs.push_back({"OUTPUT7", {}, false});
  ExpectInvalid(*add_sub_, request, "no output named 'OUTPUT7'");
  InferRequest twice = Request({{"INPUT0", Int32({1, 16})}, {"INPUT1", Int32({1, 16})}});
  twice.outputs.push_back({"OUTPUT0", {}, false});
  twice.outputs.push_back({"OUTPUT0", {}, false});
  ExpectInvalid(*add_sub_, twice, "requested more than once");
}

TEST_F(RequestValidatorTest, ReshapedInputsReachTheModelInItsShape) {
  auto model = Load("reshaped", R"pb(
    backend: "brigade"
    max_batch_size: 4 input
    [ {
      name: "x"
      data_type: TYPE_FP32
      dims: [ 6 ]
      reshape { shape: [ 2, 3 ] }
    }]
  )pb");
  InferRequest request = Request({{"x", *Tensor::Zeros(DataType::kFp32, {2, 6})}});
  ASSERT_TRUE(PrepareRequest(*model, &request).ok());
  EXPECT_EQ(request.inputs[0].tensor.shape(), (Shape{2, 2, 3}));
  EXPECT_EQ(model->inputs()[0].shape, (Shape{-1, 6}));
}

TEST_F(RequestValidatorTest, UnbatchedModelsTakeTheDeclaredShapeExactly) {
  auto model = Load("unbatched", R"pb(
    backend: "brigade" input
    [ {
      name: "x"
      data_type: TYPE_INT64
      dims: [ 2, -1 ]
    }]
  )pb");
  InferRequest ok = Request({{"x", *Tensor::Zeros(DataType::kInt64, {2, 5})}});
  EXPECT_TRUE(PrepareRequest(*model, &ok).ok());
  InferRequest bad = Request({{"x", *Tensor::Zeros(DataType::kInt64, {1, 2, 5})}});
  ExpectInvalid(*model, bad, "expected shape [2,-1]");
}

#ifdef BRIGADE_HAVE_ONNX
class OptionalInputValidatorTest : public RequestValidatorTest {
 protected:
  void SetUp() override {
    RequestValidatorTest::SetUp();
    backends_.Register(std::make_unique<engine::OnnxBackend>());
  }
  std::shared_ptr<repository::ModelVersion> LoadOnnx(std::string_view name, std::string_view config,
                                                     const engine::onnx::OnnxBuilder& graph) {
    temp_.WriteFile(StrCat(name, "/1/model.onnx"), graph.Serialize());
    return Load(name, config);
  }
  static Tensor Fp32(Shape shape) { return *Tensor::Zeros(DataType::kFp32, shape); }
};

TEST_F(OptionalInputValidatorTest, AnOmittedOptionalInputKeepsItsPlaceAsAnEmptyTensor) {
  auto model = LoadOnnx("add_bias", testing::kAddBiasConfig, engine::onnx::AddBiasGraph());
  ASSERT_NE(model, nullptr);
  InferRequest request = Request({{"x", Fp32({2, 4})}});
  ASSERT_TRUE(PrepareRequest(*model, &request).ok());
  ASSERT_EQ(request.inputs.size(), 2u);
  EXPECT_EQ(request.inputs[1].name, "bias");
  EXPECT_TRUE(request.inputs[1].tensor.empty());
  InferRequest given = Request({{"bias", Fp32({2, 4})}, {"x", Fp32({2, 4})}});
  ASSERT_TRUE(PrepareRequest(*model, &given).ok());
  EXPECT_EQ(given.inputs[1].tensor.shape(), (Shape{2, 4}));
}

TEST_F(OptionalInputValidatorTest, AnOmittedOptionalInputBeforeAGivenOneKeepsItsPlace) {
  engine::onnx::OnnxBuilder b;
  b.Input("bias", DataType::kFp32, {-1, 4});
  b.Initializer("bias", engine::onnx::Ramp({1, 4}));
  b.Input("x", DataType::kFp32, {-1, 4});
  b.Node("Add", {"x", "bias"}, {"y"});
  b.Output("y", DataType::kFp32, {-1, 4});
  auto model = LoadOnnx("bias_first", R"pb(
                          backend: "onnxruntime"
                          max_batch_size: 8 input
                          [ {
                            name: "bias"
                            data_type: TYPE_FP32
                            dims: [ 4 ]
                            optional: true
                          }
                            , {
                              name: "x"
                              data_type: TYPE_FP32
                              dims: [ 4 ]
                            }] output
                          [ {
                            name: "y"
                            data_type: TYPE_FP32
                            dims: [ 4 ]
                          }]
                        )pb",
                        b);
  ASSERT_NE(model, nullptr);
  InferRequest request = Request({{"x", Fp32({3, 4})}});
  ASSERT_TRUE(PrepareRequest(*model, &request).ok());
  ASSERT_EQ(request.inputs.size(), 2u);
  EXPECT_EQ(request.inputs[0].name, "bias");
  EXPECT_TRUE(request.inputs[0].tensor.empty());
  EXPECT_EQ(request.inputs[1].name, "x");
  EXPECT_EQ(request.inputs[1].tensor.shape(), (Shape{3, 4}));
}

TEST_F(OptionalInputValidatorTest, AnOmittedRequiredInputIsStillNamed) {
  auto model = LoadOnnx("add_bias", testing::kAddBiasConfig, engine::onnx::AddBiasGraph());
  ASSERT_NE(model, nullptr);
  InferRequest request = Request({{"bias", Fp32({1, 4})}});
  ExpectInvalid(*model, request, "model 'add_bias' is missing input 'x'");
}

TEST_F(OptionalInputValidatorTest, ABatchingRequestWithNoInputAtAllIsRefused) {
  engine::onnx::OnnxBuilder b;
  b.Input("bias", DataType::kFp32, {-1, 4});
  b.Initializer("bias", engine::onnx::Ramp({1, 4}));
  b.Node("Identity", {"bias"}, {"y"});
  b.Output("y", DataType::kFp32, {-1, 4});
  auto model = LoadOnnx("bias_only", R"pb(
                          backend: "onnxruntime"
                          max_batch_size: 8 input
                          [ {
                            name: "bias"
                            data_type: TYPE_FP32
                            dims: [ 4 ]
                            optional: true
                          }] output
                          [ {
                            name: "y"
                            data_type: TYPE_FP32
                            dims: [ 4 ]
                          }]
                        )pb",
                        b);
  ASSERT_NE(model, nullptr);
  InferRequest request;
  ExpectInvalid(*model, request, "batch size is unknown");
}
#endif  // BRIGADE_HAVE_ONNX

}  // namespace
}  // namespace brigade::pipeline
