#include "tools/analyze/pareto.h"

#include <cmath>
#include <limits>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::analyze {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// {p99_ms, throughput_per_s, accuracy}
Objectives P(double p99_ms, double throughput, double accuracy) {
  return {p99_ms, throughput, accuracy};
}

TEST(DominatesTest, BetterOnOneAndNoWorseOnOthersDominates) {
  EXPECT_TRUE(Dominates(P(1, 100, 0.9), P(2, 100, 0.9)));
  EXPECT_TRUE(Dominates(P(1, 100, 0.9), P(1, 90, 0.9)));
  EXPECT_TRUE(Dominates(P(1, 100, 0.9), P(1, 100, 0.8)));
  EXPECT_FALSE(Dominates(P(2, 100, 0.9), P(1, 100, 0.9)));
}

TEST(DominatesTest, TradeOffsAndEqualPointsDoNotDominate) {
  EXPECT_FALSE(Dominates(P(1, 100, 0.8), P(2, 100, 0.9)));
  EXPECT_FALSE(Dominates(P(2, 100, 0.9), P(1, 100, 0.8)));
  EXPECT_FALSE(Dominates(P(1, 100, 0.9), P(1, 100, 0.9)));
}

TEST(DominatesTest, InvalidPointsNeitherDominateNorAreDominated) {
  EXPECT_FALSE(Dominates(P(kNaN, 100, 0.9), P(2, 50, 0.5)));
  EXPECT_FALSE(Dominates(P(1, 100, 0.9), P(kNaN, 50, 0.5)));
  EXPECT_FALSE(Dominates(P(1, kInf, 0.9), P(2, 50, 0.5)));
}

TEST(ParetoFrontierTest, EmptyInputGivesEmptyFrontier) {
  EXPECT_THAT(ParetoFrontier({}), IsEmpty());
}

TEST(ParetoFrontierTest, KeepsOnlyNonDominatedPoints) {
  const std::vector<Objectives> points = {
      P(5, 1000, 0.92),  // 0: accurate, slow
      P(1, 1200, 0.88),  // 1: fast, less accurate
      P(6, 900, 0.92),   // 2: dominated by 0
      P(2, 1100, 0.88),  // 3: dominated by 1
      P(3, 1500, 0.90),  // 4: best throughput: a trade-off
  };
  EXPECT_THAT(ParetoFrontier(points), ElementsAre(0, 1, 4));
}

TEST(ParetoFrontierTest, IdenticalPointsAreAllKept) {
  const std::vector<Objectives> points = {P(2, 100, 0.9), P(2, 100, 0.9), P(3, 90, 0.9)};
  EXPECT_THAT(ParetoFrontier(points), ElementsAre(0, 1));
}

TEST(ParetoFrontierTest, FailedMeasurementsTakeNoPart) {
  const std::vector<Objectives> points = {P(kNaN, 5000, 0.99), P(2, 100, 0.9), P(1, 200, kNaN)};
  EXPECT_THAT(ParetoFrontier(points), ElementsAre(1));
}

TEST(RecommendTest, PicksMostThroughputAmongFeasiblePoints) {
  const std::vector<Objectives> points = {
      P(10, 500, 0.92),   // 0 feasible
      P(25, 900, 0.92),   // 1 feasible, most throughput
      P(40, 2000, 0.92),  // 2 p99 too high
      P(5, 3000, 0.85),   // 3 accuracy drop too large
  };
  const Slo slo{.max_p99_ms = 30, .max_accuracy_drop = 0.01};
  const Recommendation r = Recommend(points, slo, Goal::kMaxThroughput);
  ASSERT_EQ(r.status, Recommendation::Status::kChosen);
  EXPECT_EQ(r.chosen, 1u);
  EXPECT_THAT(r.feasible, ElementsAre(0, 1));
  EXPECT_DOUBLE_EQ(r.baseline_accuracy, 0.92);
  EXPECT_THAT(r.nearest, IsEmpty());
}

TEST(RecommendTest, BoundsAreInclusive) {
  const std::vector<Objectives> points = {P(30, 100, 0.91)};
  const Slo slo{.max_p99_ms = 30, .max_accuracy_drop = 0.01, .baseline_accuracy = 0.92};
  const Recommendation r = Recommend(points, slo, Goal::kMaxThroughput);
  ASSERT_EQ(r.status, Recommendation::Status::kChosen);
  EXPECT_EQ(r.chosen, 0u);
}

TEST(RecommendTest, GoalChangesThePick) {
  const std::vector<Objectives> points = {P(10, 500, 0.92), P(2, 300, 0.91), P(20, 900, 0.90)};
  const Slo slo{.max_p99_ms = 30, .max_accuracy_drop = 0.05};
  EXPECT_EQ(Recommend(points, slo, Goal::kMaxThroughput).chosen, 2u);
  EXPECT_EQ(Recommend(points, slo, Goal::kMinLatency).chosen, 1u);
  EXPECT_EQ(Recommend(points, slo, Goal::kMaxAccuracy).chosen, 0u);
}

TEST(RecommendTest, TiesBreakOnOtherObjectivesThenOnLowerIndex) {
  // Equal throughput: lower p99 wins.
  std::vector<Objectives> points = {P(10, 500, 0.9), P(8, 500, 0.9)};
  EXPECT_EQ(Recommend(points, {}, Goal::kMaxThroughput).chosen, 1u);
  // Equal throughput and p99: higher accuracy wins.
  points = {P(8, 500, 0.89), P(8, 500, 0.9)};
  EXPECT_EQ(Recommend(points, {}, Goal::kMaxThroughput).chosen, 1u);
  // A full tie: the first listed (cheaper) configuration stays.
  points = {P(8, 500, 0.9), P(8, 500, 0.9)};
  EXPECT_EQ(Recommend(points, {}, Goal::kMaxThroughput).chosen, 0u);
}

TEST(RecommendTest, ChosenPointIsOnTheFrontier) {
  const std::vector<Objectives> points = {P(10, 500, 0.92), P(9, 500, 0.92), P(12, 480, 0.91),
                                          P(3, 200, 0.90), P(25, 800, 0.93)};
  const Slo slo{.max_p99_ms = 20, .max_accuracy_drop = 0.02};
  const Recommendation r = Recommend(points, slo, Goal::kMaxThroughput);
  ASSERT_EQ(r.status, Recommendation::Status::kChosen);
  const std::vector<size_t> frontier = ParetoFrontier(points);
  EXPECT_TRUE(std::find(frontier.begin(), frontier.end(), r.chosen) != frontier.end());
  EXPECT_EQ(r.chosen, 1u);
}

TEST(RecommendTest, GivenBaselineOverridesTheBestAccuracy) {
  // Against the best (0.95) the 0.93 point drops 2 points; against a 0.935 reference, 0.5.
  const std::vector<Objectives> points = {P(50, 100, 0.95), P(5, 900, 0.93)};
  Slo slo{.max_p99_ms = 30, .max_accuracy_drop = 0.01};
  EXPECT_EQ(Recommend(points, slo, Goal::kMaxThroughput).status,
            Recommendation::Status::kNoPointMeetsSlo);
  slo.baseline_accuracy = 0.935;
  const Recommendation r = Recommend(points, slo, Goal::kMaxThroughput);
  ASSERT_EQ(r.status, Recommendation::Status::kChosen);
  EXPECT_EQ(r.chosen, 1u);
}

TEST(RecommendTest, NoPointMeetsTheSloNamesTheNearestWithTheirShortfalls) {
  const std::vector<Objectives> points = {
      P(45, 800, 0.92),  // 0: p99 15 over 30 → 0.5
      P(33, 700, 0.92),  // 1: p99 3 over → 0.1 (nearest)
      P(10, 900, 0.86),  // 2: drop 6 pt, 5 over 1 → 5.0
      P(31, 600, 0.91),  // 3: p99 1 over → 0.0333 (nearest of all)
      P(kNaN, 0, 0.92),  // 4: failed, never named
  };
  const Slo slo{.max_p99_ms = 30, .max_accuracy_drop = 0.01};
  const Recommendation r = Recommend(points, slo, Goal::kMaxThroughput, 3);
  ASSERT_EQ(r.status, Recommendation::Status::kNoPointMeetsSlo);
  EXPECT_THAT(r.feasible, IsEmpty());
  ASSERT_EQ(r.nearest.size(), 3u);
  EXPECT_EQ(r.nearest[0].index, 3u);
  EXPECT_EQ(r.nearest[1].index, 1u);
  EXPECT_EQ(r.nearest[2].index, 0u);
  EXPECT_DOUBLE_EQ(r.nearest[0].p99_over_ms, 1);
  EXPECT_DOUBLE_EQ(r.nearest[0].accuracy_drop_over, 0);
  EXPECT_NEAR(r.nearest[1].distance, 3.0 / 30, 1e-12);
  EXPECT_EQ(DescribeShortfall(r.nearest[0], points[3], slo, r.baseline_accuracy),
            "p99 31.00 ms exceeds 30 ms by 1.00 ms");
}

TEST(RecommendTest, ShortfallDescribesEveryMissedBound) {
  const Slo slo{.max_p99_ms = 30, .max_accuracy_drop = 0.01, .min_throughput_per_s = 1000};
  const Objectives point = P(40, 400, 0.88);
  const Shortfall shortfall = MeasureShortfall(point, slo, 0.92);
  EXPECT_DOUBLE_EQ(shortfall.p99_over_ms, 10);
  EXPECT_NEAR(shortfall.accuracy_drop_over, 0.03, 1e-12);
  EXPECT_DOUBLE_EQ(shortfall.throughput_under_per_s, 600);
  EXPECT_NEAR(shortfall.distance, 10.0 / 30 + 0.03 / 0.01 + 600.0 / 1000, 1e-9);
  EXPECT_EQ(DescribeShortfall(shortfall, point, slo, 0.92),
            "p99 40.00 ms exceeds 30 ms by 10.00 ms; accuracy drop 4.00 pt exceeds 1.00 pt by "
            "3.00 pt; throughput 400/s is 600/s below 1000/s");
}

TEST(RecommendTest, ZeroAllowedDropStillRanksByAccuracyPoints) {
  const std::vector<Objectives> points = {P(10, 900, 0.90), P(10, 100, 0.92)};
  const Slo slo{.max_p99_ms = 5, .max_accuracy_drop = 0};
  const Recommendation r = Recommend(points, slo, Goal::kMaxThroughput);
  ASSERT_EQ(r.status, Recommendation::Status::kNoPointMeetsSlo);
  // Both miss p99 by 5 ms (distance 1); point 0 also misses 2 accuracy points (scale 0.01 → +2).
  EXPECT_EQ(r.nearest[0].index, 1u);
  EXPECT_NEAR(r.nearest[1].distance, 1 + 2, 1e-9);
}

TEST(RecommendTest, EmptyOrAllFailedGivesNoValidPoints) {
  EXPECT_EQ(Recommend({}, {}, Goal::kMaxThroughput).status, Recommendation::Status::kNoValidPoints);
  const std::vector<Objectives> failed = {P(kNaN, 10, 0.9), P(1, kNaN, 0.9)};
  const Recommendation r = Recommend(failed, {}, Goal::kMaxThroughput);
  EXPECT_EQ(r.status, Recommendation::Status::kNoValidPoints);
  EXPECT_TRUE(std::isnan(r.baseline_accuracy));
  EXPECT_THAT(r.nearest, IsEmpty());
}

TEST(RecommendTest, WithoutBoundsEveryValidPointIsFeasible) {
  const std::vector<Objectives> points = {P(1, 10, 0.5), P(kNaN, 10, 0.5), P(100, 20, 0.1)};
  const Recommendation r = Recommend(points, {}, Goal::kMaxThroughput);
  ASSERT_EQ(r.status, Recommendation::Status::kChosen);
  EXPECT_THAT(r.feasible, ElementsAre(0, 2));
  EXPECT_EQ(r.chosen, 2u);
}

}  // namespace
}  // namespace brigade::analyze
