#include "tools/analyze/pareto.h"

#include <algorithm>
#include <cmath>

#include "core/strings.h"

namespace brigade::analyze {
namespace {

// -1 when `a` is better for `goal` than `b`, 1 when worse, 0 when equal on every objective.
int CompareForGoal(const Objectives& a, const Objectives& b, Goal goal) {
  auto higher = [](double x, double y) { return x > y ? -1 : x < y ? 1 : 0; };
  auto lower = [](double x, double y) { return x < y ? -1 : x > y ? 1 : 0; };
  const int throughput = higher(a.throughput_per_s, b.throughput_per_s);
  const int latency = lower(a.p99_ms, b.p99_ms);
  const int accuracy = higher(a.accuracy, b.accuracy);
  int order[3] = {throughput, latency, accuracy};
  if (goal == Goal::kMinLatency) {
    order[0] = latency;
    order[1] = throughput;
  } else if (goal == Goal::kMaxAccuracy) {
    order[0] = accuracy;
    order[1] = latency;
    order[2] = throughput;
  }
  for (int result : order) {
    if (result != 0) return result;
  }
  return 0;
}

// Amounts within this of a bound count as meeting it, so 0.92 - 0.91 (0.0100000000000000089 in
// binary) meets a 0.01 drop bound.
constexpr double kTolerance = 1e-9;

double Positive(double value) { return value > kTolerance ? value : 0; }

}  // namespace

bool IsValid(const Objectives& point) {
  return std::isfinite(point.p99_ms) && std::isfinite(point.throughput_per_s) &&
         std::isfinite(point.accuracy) && point.p99_ms >= 0 && point.throughput_per_s >= 0;
}

bool Dominates(const Objectives& a, const Objectives& b) {
  if (!IsValid(a) || !IsValid(b)) return false;
  const bool no_worse =
      a.p99_ms <= b.p99_ms && a.throughput_per_s >= b.throughput_per_s && a.accuracy >= b.accuracy;
  const bool better =
      a.p99_ms < b.p99_ms || a.throughput_per_s > b.throughput_per_s || a.accuracy > b.accuracy;
  return no_worse && better;
}

std::vector<size_t> ParetoFrontier(std::span<const Objectives> points) {
  std::vector<size_t> frontier;
  for (size_t i = 0; i < points.size(); ++i) {
    if (!IsValid(points[i])) continue;
    bool dominated = false;
    for (size_t j = 0; j < points.size() && !dominated; ++j) {
      dominated = j != i && Dominates(points[j], points[i]);
    }
    if (!dominated) frontier.push_back(i);
  }
  return frontier;
}

std::string_view GoalName(Goal goal) {
  switch (goal) {
    case Goal::kMaxThroughput:
      return "throughput";
    case Goal::kMinLatency:
      return "latency";
    case Goal::kMaxAccuracy:
      return "accuracy";
  }
  return "?";
}

std::string_view RecommendationStatusName(Recommendation::Status status) {
  switch (status) {
    case Recommendation::Status::kChosen:
      return "chosen";
    case Recommendation::Status::kNoPointMeetsSlo:
      return "no_point_meets_slo";
    case Recommendation::Status::kNoValidPoints:
      return "no_valid_points";
  }
  return "?";
}

Shortfall MeasureShortfall(const Objectives& point, const Slo& slo, double baseline_accuracy) {
  Shortfall shortfall;
  shortfall.p99_over_ms = Positive(point.p99_ms - slo.max_p99_ms);
  shortfall.accuracy_drop_over =
      Positive((baseline_accuracy - point.accuracy) - slo.max_accuracy_drop);
  shortfall.throughput_under_per_s = Positive(slo.min_throughput_per_s - point.throughput_per_s);
  if (shortfall.p99_over_ms > 0) shortfall.distance += shortfall.p99_over_ms / slo.max_p99_ms;
  if (shortfall.accuracy_drop_over > 0) {
    shortfall.distance += shortfall.accuracy_drop_over / std::max(slo.max_accuracy_drop, 0.01);
  }
  if (shortfall.throughput_under_per_s > 0) {
    shortfall.distance += shortfall.throughput_under_per_s / slo.min_throughput_per_s;
  }
  return shortfall;
}

Recommendation Recommend(std::span<const Objectives> points, const Slo& slo, Goal goal,
                         size_t nearest_count) {
  Recommendation result;
  double best_accuracy = -std::numeric_limits<double>::infinity();
  bool any_valid = false;
  for (const Objectives& point : points) {
    if (!IsValid(point)) continue;
    any_valid = true;
    best_accuracy = std::max(best_accuracy, point.accuracy);
  }
  if (!any_valid) return result;
  result.baseline_accuracy =
      std::isnan(slo.baseline_accuracy) ? best_accuracy : slo.baseline_accuracy;

  std::vector<Shortfall> misses;
  for (size_t i = 0; i < points.size(); ++i) {
    if (!IsValid(points[i])) continue;
    Shortfall shortfall = MeasureShortfall(points[i], slo, result.baseline_accuracy);
    shortfall.index = i;
    const bool feasible = shortfall.p99_over_ms == 0 && shortfall.accuracy_drop_over == 0 &&
                          shortfall.throughput_under_per_s == 0;
    if (feasible) {
      result.feasible.push_back(i);
    } else {
      misses.push_back(shortfall);
    }
  }
  if (!result.feasible.empty()) {
    result.status = Recommendation::Status::kChosen;
    result.chosen = result.feasible.front();
    for (size_t i : result.feasible) {
      // Strictly better only: on a full tie the lower index (listed first) stays.
      if (CompareForGoal(points[i], points[result.chosen], goal) < 0) result.chosen = i;
    }
    return result;
  }
  result.status = Recommendation::Status::kNoPointMeetsSlo;
  std::stable_sort(misses.begin(), misses.end(), [&](const Shortfall& a, const Shortfall& b) {
    if (a.distance != b.distance) return a.distance < b.distance;
    return CompareForGoal(points[a.index], points[b.index], goal) < 0;
  });
  if (misses.size() > nearest_count) misses.resize(nearest_count);
  result.nearest = std::move(misses);
  return result;
}

std::string DescribeShortfall(const Shortfall& shortfall, const Objectives& point, const Slo& slo,
                              double baseline_accuracy) {
  std::vector<std::string> parts;
  if (shortfall.p99_over_ms > 0) {
    parts.push_back(fmt::format("p99 {:.2f} ms exceeds {:g} ms by {:.2f} ms", point.p99_ms,
                                slo.max_p99_ms, shortfall.p99_over_ms));
  }
  if (shortfall.accuracy_drop_over > 0) {
    parts.push_back(fmt::format("accuracy drop {:.2f} pt exceeds {:.2f} pt by {:.2f} pt",
                                (baseline_accuracy - point.accuracy) * 100,
                                slo.max_accuracy_drop * 100, shortfall.accuracy_drop_over * 100));
  }
  if (shortfall.throughput_under_per_s > 0) {
    parts.push_back(fmt::format("throughput {:.0f}/s is {:.0f}/s below {:g}/s",
                                point.throughput_per_s, shortfall.throughput_under_per_s,
                                slo.min_throughput_per_s));
  }
  if (parts.empty()) return "meets the SLO";
  return fmt::format("{}", fmt::join(parts, "; "));
}

}  // namespace brigade::analyze
