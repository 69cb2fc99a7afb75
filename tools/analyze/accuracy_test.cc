#include "tools/analyze/accuracy.h"

#include <cmath>
#include <limits>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::analyze {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

template <typename T>
Tensor Scores(Shape shape, std::vector<T> values) {
  absl::StatusOr<Tensor> tensor = Tensor::FromValues<T>(shape, values);
  EXPECT_TRUE(tensor.ok()) << tensor.status();
  return *tensor;
}

TEST(ArgMaxRowsTest, PicksTheLargestScorePerRow) {
  const Tensor scores = Scores<float>({3, 4}, {0.1f, 0.7f, 0.2f, 0.0f,  //
                                               -5.f, -4.f, -9.f, -3.f,  //
                                               2.f, 1.f, 0.f, 1.f});
  absl::StatusOr<std::vector<int32_t>> classes = ArgMaxRows(scores);
  ASSERT_TRUE(classes.ok()) << classes.status();
  EXPECT_THAT(*classes, ElementsAre(1, 3, 0));
}

TEST(ArgMaxRowsTest, FirstIndexWinsATieAndNanNeverWins) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor scores = Scores<float>({3, 3}, {1.f, 3.f, 3.f,    //
                                               nan, 0.5f, 0.2f,  //
                                               0.1f, nan, 0.3f});
  absl::StatusOr<std::vector<int32_t>> classes = ArgMaxRows(scores);
  ASSERT_TRUE(classes.ok()) << classes.status();
  EXPECT_THAT(*classes, ElementsAre(1, 1, 2));
}

TEST(ArgMaxRowsTest, HandlesOtherTypesAndASingleRow) {
  absl::StatusOr<std::vector<int32_t>> classes = ArgMaxRows(Scores<double>({3}, {0.5, 2.5, 1.0}));
  ASSERT_TRUE(classes.ok());
  EXPECT_THAT(*classes, ElementsAre(1));
  classes = ArgMaxRows(Scores<int64_t>({2, 2}, {4, 9, 7, 1}));
  ASSERT_TRUE(classes.ok());
  EXPECT_THAT(*classes, ElementsAre(1, 0));
}

TEST(ArgMaxRowsTest, RefusesShapesThatAreNotRowsOfScores) {
  EXPECT_THAT(ArgMaxRows(Scores<float>({1, 2, 2}, {1, 2, 3, 4})).status().message(),
              HasSubstr("not [rows, classes]"));
  EXPECT_FALSE(ArgMaxRows(Tensor()).ok());
}

TEST(ConfidenceRowsTest, ScoresProbabilitiesAsGiven) {
  const Tensor scores = Scores<float>({2, 3}, {0.1f, 0.7f, 0.2f,  //
                                               0.5f, 0.5f, 0.0f});
  absl::StatusOr<std::vector<Confidence>> rows = ConfidenceRows(scores, /*softmax=*/false);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].top_class, 1);
  EXPECT_NEAR((*rows)[0].max_probability, 0.7, 1e-6);
  EXPECT_NEAR((*rows)[0].margin, 0.5, 1e-6);
  // A tied top: the first class, and no margin at all.
  EXPECT_EQ((*rows)[1].top_class, 0);
  EXPECT_DOUBLE_EQ((*rows)[1].margin, 0.0);
}

TEST(ConfidenceRowsTest, TakesTheSoftmaxOfLogits) {
  const Tensor scores = Scores<float>({1, 3}, {2.f, 0.f, 1.f});
  absl::StatusOr<std::vector<Confidence>> rows = ConfidenceRows(scores, /*softmax=*/true);
  ASSERT_TRUE(rows.ok()) << rows.status();
  const double sum = std::exp(2.0) + std::exp(0.0) + std::exp(1.0);
  EXPECT_EQ((*rows)[0].top_class, 0);
  EXPECT_NEAR((*rows)[0].max_probability, std::exp(2.0) / sum, 1e-12);
  EXPECT_NEAR((*rows)[0].margin, (std::exp(2.0) - std::exp(1.0)) / sum, 1e-12);
}

TEST(ConfidenceRowsTest, NanIsNoConfidenceAndOneClassIsRefused) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  absl::StatusOr<std::vector<Confidence>> rows =
      ConfidenceRows(Scores<float>({1, 2}, {nan, 0.5f}), /*softmax=*/true);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ((*rows)[0].top_class, 1);
  EXPECT_EQ((*rows)[0].max_probability, 0.0);
  EXPECT_EQ((*rows)[0].margin, 0.0);
  EXPECT_THAT(ConfidenceRows(Scores<float>({2, 1}, {1.f, 2.f}), false).status().message(),
              HasSubstr("at least two classes"));
  EXPECT_THAT(ConfidenceRows(Scores<int32_t>({1, 2}, {1, 2}), false).status().message(),
              HasSubstr("not FP32 or FP64"));
}

TEST(ScorePredictionsTest, CountsMatches) {
  const std::vector<int32_t> predictions = {1, 2, 3, 4};
  const std::vector<int64_t> labels = {1, 0, 3, 4};
  absl::StatusOr<Score> score = ScorePredictions(predictions, labels);
  ASSERT_TRUE(score.ok());
  EXPECT_EQ(score->examples, 4);
  EXPECT_EQ(score->correct, 3);
  EXPECT_DOUBLE_EQ(score->accuracy, 0.75);
}

TEST(ScorePredictionsTest, EmptyScoresZeroAndLengthsMustAgree) {
  absl::StatusOr<Score> score = ScorePredictions({}, {});
  ASSERT_TRUE(score.ok());
  EXPECT_EQ(score->accuracy, 0.0);
  const std::vector<int32_t> two = {1, 2};
  const std::vector<int64_t> three = {1, 2, 3};
  EXPECT_THAT(ScorePredictions(two, three).status().message(),
              HasSubstr("2 predictions for 3 expected"));
}

}  // namespace
}  // namespace brigade::analyze
