#ifndef BRIGADE_TOOLS_ANALYZE_PARETO_H_
#define BRIGADE_TOOLS_ANALYZE_PARETO_H_

// The Pareto frontier of measured operating points over (p99 latency ↓, throughput ↑,
// accuracy ↑), and the recommendation of one point for a service-level objective.
//
// Dominance: a dominates b when a is at least as good as b on all three objectives and strictly
// better on one. The frontier is every valid point no valid point dominates; identical points do
// not dominate each other, so ties are all kept. A point is valid when its three numbers are
// finite and its latency and throughput are not negative (a failed measurement is NaN and takes
// no part).
//
// Recommendation: the feasible points are those with
//   p99 ≤ max_p99_ms,  baseline − accuracy ≤ max_accuracy_drop,  throughput ≥ min_throughput;
// (within 1e-9, so decimal bounds are not missed by binary rounding); the baseline is given (a
// reference variant's accuracy) or else the best valid accuracy. Among
// them the goal picks one (most throughput by default), ties broken by the other objectives and
// then by the lower index, so the caller lists cheaper configurations first. The pick is always on
// the frontier: a point dominating it would be feasible and win. When nothing is feasible the
// result says so and names the nearest points, ranked by their summed, normalized shortfall:
//   (p99 − max_p99) / max_p99 + (drop − max_drop) / max(max_drop, 0.01)
//     + (min_throughput − throughput) / min_throughput,
// each term counted only when positive (0.01 is one accuracy point, the scale used when no drop
// is allowed).
//
// Pure functions; thread-safe.

#include <cstddef>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace brigade::analyze {

struct Objectives {
  double p99_ms = 0;
  double throughput_per_s = 0;
  // A fraction in [0, 1] (top-1 accuracy or agreement).
  double accuracy = 0;
};

bool IsValid(const Objectives& point);

// True when `a` dominates `b` (see above); false whenever either is invalid.
bool Dominates(const Objectives& a, const Objectives& b);

// Indices of the frontier points, ascending.
std::vector<size_t> ParetoFrontier(std::span<const Objectives> points);

struct Slo {
  double max_p99_ms = std::numeric_limits<double>::infinity();
  // Absolute: 0.01 allows one accuracy point below the baseline.
  double max_accuracy_drop = std::numeric_limits<double>::infinity();
  // NaN: the best valid accuracy among the points.
  double baseline_accuracy = std::numeric_limits<double>::quiet_NaN();
  double min_throughput_per_s = 0;
};

enum class Goal { kMaxThroughput, kMinLatency, kMaxAccuracy };

// "throughput", "latency", "accuracy".
std::string_view GoalName(Goal goal);

// How far a point is from meeting the SLO; each part is 0 where it meets it.
struct Shortfall {
  size_t index = 0;
  double p99_over_ms = 0;
  double accuracy_drop_over = 0;
  double throughput_under_per_s = 0;
  // The normalized sum used for ranking (see above).
  double distance = 0;
};

struct Recommendation {
  enum class Status { kChosen, kNoPointMeetsSlo, kNoValidPoints };
  Status status = Status::kNoValidPoints;
  // The chosen point (kChosen only).
  size_t chosen = 0;
  // The baseline the drop was measured from (NaN when there are no valid points).
  double baseline_accuracy = std::numeric_limits<double>::quiet_NaN();
  // Every feasible point, ascending.
  std::vector<size_t> feasible{};
  // kNoPointMeetsSlo: the nearest points, closest first.
  std::vector<Shortfall> nearest{};
};

// "chosen", "no_point_meets_slo", "no_valid_points".
std::string_view RecommendationStatusName(Recommendation::Status status);

Recommendation Recommend(std::span<const Objectives> points, const Slo& slo, Goal goal,
                         size_t nearest_count = 3);

// The shortfall of `point` against `slo` given the baseline (never NaN here).
Shortfall MeasureShortfall(const Objectives& point, const Slo& slo, double baseline_accuracy);

// "p99 41.2 ms exceeds 30 ms by 11.2 ms; accuracy drop 3.10 pt exceeds 1.00 pt by 2.10 pt".
std::string DescribeShortfall(const Shortfall& shortfall, const Objectives& point, const Slo& slo,
                              double baseline_accuracy);

}  // namespace brigade::analyze

#endif  // BRIGADE_TOOLS_ANALYZE_PARETO_H_
