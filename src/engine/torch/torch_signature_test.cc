#include "engine/torch/torch_signature.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::engine {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TensorSpec Spec(std::string name, DataType type = DataType::kFp32, Shape shape = {-1, 4}) {
  return TensorSpec{std::move(name), type, std::move(shape)};
}

std::vector<TensorSpec> Specs(std::initializer_list<std::string> names) {
  std::vector<TensorSpec> specs;
  for (const std::string& name : names) specs.push_back(Spec(name));
  return specs;
}

TEST(ParseTorchSignatureJsonTest, ReadsNamesTypesAndShapes) {
  auto signature = ParseTorchSignatureJson(R"({
      "inputs": [{"name": "image", "datatype": "FP32", "shape": [-1, 1, 28, 28]},
                 {"name": "mask", "datatype": "TYPE_BOOL", "shape": [-1]}],
      "outputs": [{"name": "logits", "datatype": "FP16", "shape": [-1, 10]}]})");
  ASSERT_TRUE(signature.ok()) << signature.status();
  EXPECT_THAT(signature->inputs, ElementsAre(Spec("image", DataType::kFp32, {-1, 1, 28, 28}),
                                             Spec("mask", DataType::kBool, {-1})));
  EXPECT_THAT(signature->outputs, ElementsAre(Spec("logits", DataType::kFp16, {-1, 10})));
}

TEST(ParseTorchSignatureJsonTest, RejectsMalformedDocumentsNamingTheField) {
  struct Case {
    std::string json;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"{not json", "not valid JSON"},
      {"[1, 2]", "not a JSON object"},
      {R"({"outputs": []})", "\"inputs\" must be a list"},
      {R"({"inputs": [], "outputs": []})", "\"inputs\" is empty"},
      {R"({"inputs": [{"name": "x", "datatype": "FP32", "shape": [1]}]})",
       "\"outputs\" must be a list"},
      {R"({"inputs": [{"datatype": "FP32", "shape": [1]}], "outputs": []})",
       "inputs[0]: \"name\" must be a non-empty string"},
      {R"({"inputs": [{"name": "x", "datatype": "FLOAT", "shape": [1]}], "outputs": []})",
       "inputs[0] 'x': unknown datatype 'FLOAT'"},
      {R"({"inputs": [{"name": "x", "datatype": "FP32", "shape": [-2]}], "outputs": []})",
       "shape dimensions must be integers >= -1"},
      {R"({"inputs": [{"name": "x", "datatype": "FP32", "shape": "1x4"}], "outputs": []})",
       "\"shape\" must be a list of integers"},
      {R"({"inputs": [{"name": "x", "datatype": "FP32", "shape": [1]},
                      {"name": "x", "datatype": "FP32", "shape": [1]}], "outputs": []})",
       "duplicate name 'x'"},
  };
  for (const Case& c : cases) {
    auto signature = ParseTorchSignatureJson(c.json);
    ASSERT_FALSE(signature.ok()) << c.json;
    EXPECT_EQ(signature.status().code(), absl::StatusCode::kInvalidArgument) << c.json;
    EXPECT_THAT(signature.status().message(), HasSubstr(c.message)) << c.json;
  }
}

TEST(ResolveTorchSignatureTest, DeclaredSpecsWinOverEmbeddedOnes) {
  ModelLoadOptions options;
  options.declared_inputs = {Spec("declared_in")};
  options.declared_outputs = {Spec("declared_out")};
  ModelSignature embedded{{Spec("file_in")}, {Spec("file_out")}};
  auto signature = ResolveTorchSignature(options, &embedded);
  ASSERT_TRUE(signature.ok()) << signature.status();
  EXPECT_EQ(signature->inputs[0].name, "declared_in");
  EXPECT_EQ(signature->outputs[0].name, "declared_out");
}

TEST(ResolveTorchSignatureTest, FillsWhatTheConfigLeavesOutFromTheFile) {
  ModelLoadOptions options;
  options.declared_inputs = {Spec("declared_in")};
  ModelSignature embedded{{Spec("file_in")}, {Spec("file_out")}};
  auto signature = ResolveTorchSignature(options, &embedded);
  ASSERT_TRUE(signature.ok()) << signature.status();
  EXPECT_EQ(signature->inputs[0].name, "declared_in");
  EXPECT_EQ(signature->outputs[0].name, "file_out");
}

TEST(ResolveTorchSignatureTest, NothingDeclaredAnywhereAsksForConfig) {
  ModelLoadOptions options;
  options.model_name = "resnet";
  options.model_path = "/models/resnet/1/model.pt";
  options.declared_inputs = {Spec("x")};
  auto signature = ResolveTorchSignature(options, nullptr);
  ASSERT_FALSE(signature.ok());
  EXPECT_THAT(signature.status().message(), HasSubstr("model 'resnet'"));
  EXPECT_THAT(signature.status().message(), HasSubstr("/models/resnet/1/model.pt"));
  EXPECT_THAT(signature.status().message(), HasSubstr("declare them in config.pbtxt"));
  EXPECT_THAT(signature.status().message(), HasSubstr("outputs"));
}

TEST(TritonTensorIndexTest, ParsesOnlyTheDoubleUnderscoreSuffix) {
  EXPECT_EQ(TritonTensorIndex("INPUT__0"), 0);
  EXPECT_EQ(TritonTensorIndex("OUTPUT__12"), 12);
  EXPECT_EQ(TritonTensorIndex("my__input__3"), 3);
  EXPECT_EQ(TritonTensorIndex("INPUT0"), std::nullopt);
  EXPECT_EQ(TritonTensorIndex("INPUT_0"), std::nullopt);
  EXPECT_EQ(TritonTensorIndex("INPUT__"), std::nullopt);
  EXPECT_EQ(TritonTensorIndex("INPUT__x"), std::nullopt);
  EXPECT_EQ(TritonTensorIndex("INPUT__-1"), std::nullopt);
  EXPECT_EQ(TritonTensorIndex("__0"), std::nullopt);
}

TEST(MapInputsToArgumentsTest, MatchingArgumentNamesBindByName) {
  const std::vector<std::string> arguments = {"a", "b", "c"};
  auto positions = MapInputsToArguments(Specs({"c", "a"}), arguments);
  ASSERT_TRUE(positions.ok()) << positions.status();
  EXPECT_THAT(*positions, ElementsAre(2, 0));
}

TEST(MapInputsToArgumentsTest, TritonNamesBindByIndex) {
  const std::vector<std::string> arguments = {"x", "y"};
  auto positions = MapInputsToArguments(Specs({"INPUT__1", "INPUT__0"}), arguments);
  ASSERT_TRUE(positions.ok()) << positions.status();
  EXPECT_THAT(*positions, ElementsAre(1, 0));
}

TEST(MapInputsToArgumentsTest, OtherNamesBindInDeclaredOrder) {
  const std::vector<std::string> arguments = {"x", "y"};
  auto positions = MapInputsToArguments(Specs({"image", "INPUT__0"}), arguments);
  ASSERT_TRUE(positions.ok()) << positions.status();
  EXPECT_THAT(*positions, ElementsAre(0, 1));
}

TEST(MapInputsToArgumentsTest, RefusesTooManyInputsAndOutOfRangeOrRepeatedIndices) {
  const std::vector<std::string> arguments = {"x", "y"};
  EXPECT_THAT(MapInputsToArguments(Specs({"a", "b", "c"}), arguments).status().message(),
              HasSubstr("3 inputs declared but forward() takes 2 argument(s) after self: (x, y)"));
  EXPECT_THAT(MapInputsToArguments(Specs({"INPUT__0", "INPUT__2"}), arguments).status().message(),
              HasSubstr("input 'INPUT__2' names forward() argument 2"));
  EXPECT_THAT(MapInputsToArguments(Specs({"A__1", "B__1"}), arguments).status().message(),
              HasSubstr("input 'B__1' maps to forward() argument 'y', as another input does"));
}

TEST(MapOutputsToResultsTest, TritonNamesPickResultsByIndexOthersByOrder) {
  auto by_index = MapOutputsToResults(Specs({"OUTPUT__2", "OUTPUT__0"}));
  ASSERT_TRUE(by_index.ok());
  EXPECT_THAT(*by_index, ElementsAre(2, 0));
  auto by_order = MapOutputsToResults(Specs({"logits", "OUTPUT__5"}));
  ASSERT_TRUE(by_order.ok());
  EXPECT_THAT(*by_order, ElementsAre(0, 1));
  EXPECT_FALSE(MapOutputsToResults(Specs({"A__0", "B__0"})).ok());
}

}  // namespace
}  // namespace brigade::engine
