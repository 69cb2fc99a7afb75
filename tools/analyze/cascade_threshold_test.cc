#include "tools/analyze/cascade_threshold.h"

#include <cmath>
#include <limits>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::analyze {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Four examples, by ascending score: the first variant is wrong on 0 and 2, the second on 3.
struct FourExamples {
  std::vector<int32_t> first = {1, 1, 0, 3};
  std::vector<double> scores = {0.2, 0.5, 0.8, 0.9};
  std::vector<int32_t> second = {0, 1, 2, 0};
  std::vector<int64_t> labels = {0, 1, 2, 3};

  absl::StatusOr<ThresholdSweep> Sweep(CascadeTarget target) const {
    return SweepThresholds(first, scores, second, labels, target);
  }
};

CascadeTarget Accuracy(double value) { return {CascadeTarget::Kind::kAccuracy, value}; }

TEST(SweepThresholdsTest, ScoresEveryCandidateAsTheRouterWouldSplit) {
  absl::StatusOr<ThresholdSweep> sweep = FourExamples().Sweep(Accuracy(0.5));
  ASSERT_TRUE(sweep.ok()) << sweep.status();
  EXPECT_EQ(sweep->examples, 4);
  EXPECT_DOUBLE_EQ(sweep->first_accuracy, 0.5);
  EXPECT_DOUBLE_EQ(sweep->second_accuracy, 0.75);
  std::vector<std::string> texts;
  std::vector<int64_t> correct;
  std::vector<int64_t> escalated;
  for (const ThresholdPoint& point : sweep->points) {
    texts.push_back(point.text);
    correct.push_back(point.correct);
    escalated.push_back(point.escalated);
  }
  // The distinct scores plus 0 and 1; a candidate escalates the scores below it.
  EXPECT_THAT(texts, ElementsAre("0", "0.2", "0.5", "0.8", "0.9", "1"));
  EXPECT_THAT(escalated, ElementsAre(0, 0, 1, 2, 3, 4));
  EXPECT_THAT(correct, ElementsAre(2, 2, 3, 3, 4, 3));
  EXPECT_DOUBLE_EQ(sweep->points[4].accuracy, 1.0);
  EXPECT_DOUBLE_EQ(sweep->points[4].escalated_share, 0.75);
}

TEST(SweepThresholdsTest, ChoosesTheFewestEscalationsThatReachTheTarget) {
  const FourExamples set;
  absl::StatusOr<ThresholdSweep> sweep = set.Sweep(Accuracy(0.75));
  ASSERT_TRUE(sweep.ok());
  EXPECT_TRUE(sweep->target_met);
  EXPECT_EQ(sweep->points[sweep->chosen].text, "0.5");
  sweep = set.Sweep(Accuracy(1.0));
  ASSERT_TRUE(sweep.ok());
  EXPECT_EQ(sweep->points[sweep->chosen].text, "0.9");
  // 0 and 0.2 both escalate nothing: the lower wins.
  sweep = set.Sweep(Accuracy(0.5));
  ASSERT_TRUE(sweep.ok());
  EXPECT_EQ(sweep->chosen, 0);
}

TEST(SweepThresholdsTest, TargetsADropFromTheSecondVariantAlone) {
  const FourExamples set;
  absl::StatusOr<ThresholdSweep> sweep = set.Sweep({CascadeTarget::Kind::kMaxDropFromSecond, 0});
  ASSERT_TRUE(sweep.ok());
  EXPECT_DOUBLE_EQ(sweep->target_accuracy, 0.75);
  EXPECT_EQ(sweep->points[sweep->chosen].text, "0.5");
  sweep = set.Sweep({CascadeTarget::Kind::kMaxDropFromSecond, 0.3});
  ASSERT_TRUE(sweep.ok());
  EXPECT_NEAR(sweep->target_accuracy, 0.45, 1e-12);
  EXPECT_EQ(sweep->chosen, 0);
}

TEST(SweepThresholdsTest, UnreachableTargetPicksTheMostAccurateAndSaysSo) {
  const std::vector<int32_t> first = {9, 1, 9};
  const std::vector<double> scores = {0.3, 0.6, 0.9};
  const std::vector<int32_t> second = {0, 9, 9};
  const std::vector<int64_t> labels = {0, 1, 2};
  absl::StatusOr<ThresholdSweep> sweep =
      SweepThresholds(first, scores, second, labels, Accuracy(0.9));
  ASSERT_TRUE(sweep.ok());
  EXPECT_FALSE(sweep->target_met);
  EXPECT_EQ(sweep->points[sweep->chosen].text, "0.6");
  EXPECT_EQ(sweep->points[sweep->chosen].correct, 2);
}

TEST(SweepThresholdsTest, WritesTheShortestDecimalThatSplitsTheSame) {
  const std::vector<int32_t> classes = {0, 0, 0};
  const std::vector<double> scores = {0.91, 0.973121, 0.973125};
  const std::vector<int64_t> labels = {0, 0, 0};
  absl::StatusOr<ThresholdSweep> sweep =
      SweepThresholds(classes, scores, classes, labels, Accuracy(1));
  ASSERT_TRUE(sweep.ok());
  std::vector<std::string> texts;
  for (const ThresholdPoint& point : sweep->points) texts.push_back(point.text);
  EXPECT_THAT(texts, ElementsAre("0", "0.9", "0.97", "0.973125", "1"));
  for (const ThresholdPoint& point : sweep->points) {
    int64_t below = 0;
    for (double score : scores) below += score < point.threshold;
    EXPECT_EQ(below, point.escalated) << point.text;
  }
}

TEST(SweepThresholdsTest, RefusesMismatchedEmptyOrNanInput) {
  const std::vector<int32_t> two = {0, 1};
  const std::vector<double> scores = {0.5, std::numeric_limits<double>::quiet_NaN()};
  const std::vector<int64_t> labels = {0, 1};
  const std::vector<int32_t> one = {0};
  EXPECT_THAT(SweepThresholds(two, scores, one, labels, Accuracy(0.5)).status().message(),
              HasSubstr("must be as many"));
  EXPECT_THAT(SweepThresholds(two, scores, two, labels, Accuracy(0.5)).status().message(),
              HasSubstr("example 1 is NaN"));
  EXPECT_THAT(SweepThresholds({}, {}, {}, {}, Accuracy(0.5)).status().message(),
              HasSubstr("no examples"));
  const std::vector<double> fine = {0.5, 0.6};
  EXPECT_THAT(SweepThresholds(two, fine, two, labels, Accuracy(1.5)).status().message(),
              HasSubstr("not a fraction"));
}

TEST(PointsAroundChoiceTest, PicksTheNearestSharesAroundTheChoice) {
  ThresholdSweep sweep;
  for (int i = 0; i <= 100; ++i) {
    ThresholdPoint point;
    point.escalated = i;
    point.escalated_share = i / 100.0;
    sweep.points.push_back(point);
  }
  sweep.chosen = 50;
  EXPECT_THAT(PointsAroundChoice(sweep), ElementsAre(40, 45, 48, 49, 50, 51, 52, 55, 60));
  // Offsets past either end are left out, not clamped onto the ends.
  sweep.chosen = 3;
  EXPECT_THAT(PointsAroundChoice(sweep), ElementsAre(1, 2, 3, 4, 5, 8, 13));
}

}  // namespace
}  // namespace brigade::analyze
