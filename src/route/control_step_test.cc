#include "route/control_step.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace brigade::route {
namespace {

using Fusion = config::ModelEnsembling::StepFusion;

Tensor Floats(Shape shape, std::vector<float> values) {
  return *Tensor::FromValues<float>(std::move(shape), std::span<const float>(values));
}

std::vector<float> ValuesOf(const Tensor& tensor) {
  return {tensor.values<float>().begin(), tensor.values<float>().end()};
}

TEST(SwitchParameterTextTest, WritesEachKindAsABranchValueIsWritten) {
  Parameters parameters;
  parameters.Set("urgent", true);
  parameters.Set("tier", int64_t{3});
  parameters.Set("ratio", 2.0);
  parameters.Set("scale", 0.5);
  parameters.Set("user", std::string("alice"));
  EXPECT_EQ(SwitchParameterText(parameters, "urgent"), "true");
  EXPECT_EQ(SwitchParameterText(parameters, "tier"), "3");
  EXPECT_EQ(SwitchParameterText(parameters, "ratio"), "2");  // a JSON 2.0 matches "2"
  EXPECT_EQ(SwitchParameterText(parameters, "scale"), "0.5");
  EXPECT_EQ(SwitchParameterText(parameters, "user"), "alice");
  EXPECT_EQ(SwitchParameterText(parameters, "missing"), std::nullopt);
}

TEST(SwitchTensorValuesTest, ArgmaxPicksTheFirstHighestScoreOfEveryRow) {
  const Tensor scores = Floats({2, 3}, {0.1f, 0.7f, 0.7f, 0.0f, 0.9f, 0.2f});
  EXPECT_EQ(*SwitchTensorValues(scores, "scores", /*argmax=*/true, /*batching=*/true),
            (std::vector<std::string>{"1", "1"}));
}

TEST(SwitchTensorValuesTest, RowsThatDisagreeGiveEachItsOwnValue) {
  const Tensor scores = Floats({3, 2}, {0.9f, 0.1f, 0.2f, 0.8f, 0.6f, 0.4f});
  EXPECT_EQ(*SwitchTensorValues(scores, "scores", true, true),
            (std::vector<std::string>{"0", "1", "0"}));
  // Without batching the tensor is one row: its highest element of all.
  EXPECT_EQ(*SwitchTensorValues(scores, "scores", true, false), std::vector<std::string>{"0"});
}

TEST(SwitchTensorValuesTest, ValueReadsOneElementPerRowOfAnyKind) {
  const std::vector<int64_t> ids = {4, 7};
  EXPECT_EQ(*SwitchTensorValues(*Tensor::FromValues<int64_t>({2, 1}, std::span<const int64_t>(ids)),
                                "id", false, true),
            (std::vector<std::string>{"4", "7"}));
  const std::vector<std::string> words = {"shoes"};
  EXPECT_EQ(*SwitchTensorValues(*Tensor::FromStrings({1}, words), "word", false, false),
            std::vector<std::string>{"shoes"});
  absl::StatusOr<std::vector<std::string>> wide =
      SwitchTensorValues(Floats({1, 2}, {1, 2}), "pair", false, true);
  ASSERT_FALSE(wide.ok());
  EXPECT_NE(wide.status().message().find("tensor 'pair' has 2 values per row"), std::string::npos);
}

TEST(FuseTest, SelectSharesTheOneInputThatExists) {
  const Tensor only = Floats({1, 2}, {3, 4});
  absl::StatusOr<Tensor> out = Fuse(Fusion::SELECT, std::vector<Tensor>{only}, 1, {});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->data(), only.data());
  EXPECT_FALSE(Fuse(Fusion::SELECT, std::vector<Tensor>{only, only}, 1, {}).ok());
}

TEST(FuseTest, ConcatJoinsRowsAlongTheAxis) {
  const Tensor a = Floats({2, 1}, {1, 2});
  const Tensor b = Floats({2, 2}, {10, 11, 20, 21});
  absl::StatusOr<Tensor> out = Fuse(Fusion::CONCAT, std::vector<Tensor>{a, b}, 1, {});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), (Shape{2, 3}));
  EXPECT_EQ(ValuesOf(*out), (std::vector<float>{1, 10, 11, 2, 20, 21}));
}

TEST(FuseTest, MeanAndWeightedSumAreElementWise) {
  const Tensor a = Floats({1, 2}, {1, 2});
  const Tensor b = Floats({1, 2}, {3, 6});
  EXPECT_EQ(ValuesOf(*Fuse(Fusion::MEAN, std::vector<Tensor>{a, b}, 1, {})),
            (std::vector<float>{2, 4}));
  const std::vector<float> weights = {0.25f, 0.5f};
  EXPECT_EQ(ValuesOf(*Fuse(Fusion::WEIGHTED_SUM, std::vector<Tensor>{a, b}, 1, weights)),
            (std::vector<float>{1.75f, 3.5f}));
}

TEST(FusionSignatureTest, ConcatAddsTheAxisAndRefusesOtherMismatches) {
  const std::vector<TensorSignature> inputs = {{"g", DataType::kFp32, {-1, 3}, false},
                                               {"c", DataType::kFp32, {-1, 10}, false}};
  absl::StatusOr<TensorSignature> out = FusionSignature(Fusion::CONCAT, inputs, 1, {});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape, (Shape{-1, 13}));
  absl::StatusOr<TensorSignature> mean = FusionSignature(Fusion::MEAN, inputs, 1, {});
  ASSERT_FALSE(mean.ok());
  EXPECT_NE(mean.status().message().find("tensor 'c' has shape [-1,10] but 'g' has [-1,3]"),
            std::string::npos)
      << mean.status();
  const std::vector<TensorSignature> mixed = {{"g", DataType::kFp32, {-1, 3}, false},
                                              {"i", DataType::kInt64, {-1, 3}, false}};
  absl::StatusOr<TensorSignature> select = FusionSignature(Fusion::SELECT, mixed, 1, {});
  ASSERT_FALSE(select.ok());
  EXPECT_NE(select.status().message().find("tensor 'i' is INT64 but 'g' is FP32"),
            std::string::npos)
      << select.status();
  const std::vector<float> one = {1.0f};
  EXPECT_FALSE(FusionSignature(Fusion::WEIGHTED_SUM, inputs, 1, one).ok());
}

}  // namespace
}  // namespace brigade::route
