#include "process/classify.h"

#include <cmath>
#include <limits>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::process {
namespace {

using ::testing::ElementsAre;

TEST(ClassifyTest, SoftmaxMatchesTheFormulaPerRowAndSurvivesLargeLogits) {
  const std::vector<float> logits = {1, 2, 3, 1000, 1000, 990};
  std::vector<float> out(6);
  ASSERT_TRUE(Softmax(logits, 3, out).ok());
  const double z = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  EXPECT_NEAR(out[0], std::exp(1.0) / z, 1e-6);
  EXPECT_NEAR(out[2], std::exp(3.0) / z, 1e-6);
  // No overflow: exp(x - max).
  EXPECT_NEAR(out[3], 1.0 / (2 + std::exp(-10.0)), 1e-6);
  EXPECT_NEAR(out[3] + out[4] + out[5], 1.0, 1e-6);
}

TEST(ClassifyTest, SoftmaxOfARowWithNanIsNan) {
  const std::vector<float> logits = {1, std::nanf(""), 3, 0, 0, 0};
  std::vector<float> out(6);
  ASSERT_TRUE(Softmax(logits, 3, out).ok());
  EXPECT_TRUE(std::isnan(out[0]) && std::isnan(out[2]));
  EXPECT_NEAR(out[3], 1.0 / 3, 1e-7);
}

TEST(ClassifyTest, TopKIsLargestFirstWithTiesToTheLowerIndex) {
  const std::vector<float> scores = {0.1f, 0.5f,  0.2f,          0.5f, 0.0f,  // row 0
                                     3.0f, -1.0f, std::nanf(""), 2.0f, 1.0f};
  std::vector<float> values(6);
  std::vector<int64_t> indices(6);
  ASSERT_TRUE(TopK(scores, 5, 3, values, indices).ok());
  EXPECT_THAT(indices, ElementsAre(1, 3, 2, 2, 0, 3));
  EXPECT_EQ(values[0], 0.5f);
  EXPECT_EQ(values[2], 0.2f);
  EXPECT_TRUE(std::isnan(values[3]));
  EXPECT_EQ(values[4], 3.0f);
}

TEST(ClassifyTest, ArgmaxAndThreshold) {
  const std::vector<float> scores = {0.1f, 0.7f, 0.7f, 0.9f, 0.2f, 0.3f};
  std::vector<int64_t> best(2);
  ASSERT_TRUE(Argmax(scores, 3, best).ok());
  EXPECT_THAT(best, ElementsAre(1, 0));
  absl::StatusOr<std::vector<std::vector<int64_t>>> kept = Threshold(scores, 3, 0.3f);
  ASSERT_TRUE(kept.ok());
  EXPECT_THAT((*kept)[0], ElementsAre(1, 2));
  EXPECT_THAT((*kept)[1], ElementsAre(0, 2));
}

TEST(ClassifyTest, RefusesMismatchedSizes) {
  const std::vector<float> scores(10);
  std::vector<float> out(9);
  EXPECT_EQ(Softmax(scores, 3, out).code(), absl::StatusCode::kInvalidArgument);  // 10 % 3
  std::vector<float> soft(10);
  EXPECT_FALSE(Softmax(scores, 0, soft).ok());
  std::vector<float> values(4);
  std::vector<int64_t> indices(4);
  EXPECT_FALSE(TopK(scores, 5, 6, values, indices).ok());  // k > classes
  EXPECT_FALSE(TopK(scores, 5, 0, values, indices).ok());
  EXPECT_TRUE(TopK(scores, 5, 2, values, indices).ok());
  std::vector<int64_t> three(3);
  EXPECT_FALSE(TopK(scores, 5, 2, values, three).ok());
  EXPECT_FALSE(Argmax(scores, 5, three).ok());
}

}  // namespace
}  // namespace brigade::process
