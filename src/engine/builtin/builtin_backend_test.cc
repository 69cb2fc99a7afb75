#include "engine/builtin/builtin_backend.h"

#include <vector>

#include "gtest/gtest.h"

namespace brigade::engine {
namespace {

ModelLoadOptions AddSubOptions() {
  ModelLoadOptions options;
  options.model_name = "simple";
  options.max_batch_size = 8;
  options.parameters["op"] = "add_sub";
  options.declared_inputs = {{"INPUT0", DataType::kInt32, {-1, 4}},
                             {"INPUT1", DataType::kInt32, {-1, 4}}};
  options.declared_outputs = {{"OUTPUT0", DataType::kInt32, {-1, 4}},
                              {"OUTPUT1", DataType::kInt32, {-1, 4}}};
  return options;
}

TEST(BuiltinBackendTest, AddSubComputesSumAndDifference) {
  BuiltinBackend backend;
  auto model = backend.Load(AddSubOptions());
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ((*model)->signature().outputs[1].name, "OUTPUT1");
  auto instance = (*model)->CreateInstance({});
  ASSERT_TRUE(instance.ok());
  std::vector<int32_t> a = {1, 2, 3, 4}, b = {10, 20, 30, 40};
  std::vector<Tensor> inputs = {*Tensor::FromValues<int32_t>({1, 4}, a),
                                *Tensor::FromValues<int32_t>({1, 4}, b)};
  std::vector<Tensor> outputs;
  ASSERT_TRUE((*instance)->Execute(inputs, &outputs).ok());
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_EQ(outputs[0].values<int32_t>()[3], 44);
  EXPECT_EQ(outputs[1].values<int32_t>()[0], -9);
}

TEST(BuiltinBackendTest, AnOptionalInputIsRefusedNamingIt) {
  BuiltinBackend backend;
  ModelLoadOptions options = AddSubOptions();
  options.declared_inputs[1].optional = true;
  auto model = backend.Load(options);
  EXPECT_EQ(model.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(model.status().message()).find("model 'simple': input 'INPUT1'"),
            std::string::npos)
      << model.status();
}

TEST(BuiltinBackendTest, IdentityNamesOutputsWhenConfigDoesNot) {
  BuiltinBackend backend;
  ModelLoadOptions options;
  options.model_name = "id";
  options.declared_inputs = {{"x", DataType::kFp32, {-1}}};
  auto model = backend.Load(options);
  ASSERT_TRUE(model.ok());
  EXPECT_EQ((*model)->signature().outputs[0].name, "OUTPUT0");
}

TEST(BuiltinBackendTest, UnknownOpIsRejectedByName) {
  BuiltinBackend backend;
  ModelLoadOptions options = AddSubOptions();
  options.parameters["op"] = "multiply";
  auto model = backend.Load(options);
  EXPECT_EQ(model.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(model.status().message().find("multiply"), std::string::npos);
}

TEST(BuiltinBackendTest, MismatchedAddSubInputsFailWithoutCrashing) {
  BuiltinBackend backend;
  auto model = backend.Load(AddSubOptions());
  auto instance = (*model)->CreateInstance({});
  std::vector<int32_t> a = {1, 2, 3, 4};
  std::vector<float> b = {1, 2, 3, 4};
  std::vector<Tensor> inputs = {*Tensor::FromValues<int32_t>({1, 4}, a),
                                *Tensor::FromValues<float>({1, 4}, b)};
  std::vector<Tensor> outputs;
  EXPECT_EQ((*instance)->Execute(inputs, &outputs).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace brigade::engine
