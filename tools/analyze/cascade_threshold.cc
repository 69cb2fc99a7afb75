#include "tools/analyze/cascade_threshold.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <numeric>

#include "core/strings.h"
#include "fmt/format.h"

namespace brigade::analyze {
namespace {

constexpr double kAccuracyTolerance = 1e-9;

// The shortest decimal x with low < x <= high, as text (high itself at worst).
std::string ShortestIn(double low, double high) {
  for (int digits = 1; digits <= 17; ++digits) {
    std::string text = fmt::format("{:.{}g}", high, digits);
    const double value = std::strtod(text.c_str(), nullptr);
    if (value > low && value <= high) return text;
  }
  return fmt::format("{}", high);
}

double Share(int64_t part, int64_t whole) {
  return whole == 0 ? 0.0 : static_cast<double>(part) / static_cast<double>(whole);
}

}  // namespace

absl::StatusOr<ThresholdSweep> SweepThresholds(std::span<const int32_t> first_classes,
                                               std::span<const double> first_scores,
                                               std::span<const int32_t> second_classes,
                                               std::span<const int64_t> labels,
                                               const CascadeTarget& target) {
  const size_t n = labels.size();
  if (first_classes.size() != n || first_scores.size() != n || second_classes.size() != n) {
    return absl::InvalidArgumentError(StrCat("the first variant's ", first_classes.size(),
                                             " classes and ", first_scores.size(),
                                             " scores, the second's ", second_classes.size(),
                                             " classes and ", n, " labels must be as many"));
  }
  if (n == 0) return absl::InvalidArgumentError("no examples to learn a threshold on");
  if (!(target.value >= 0 && target.value <= 1)) {
    return absl::InvalidArgumentError(
        StrCat("target ", target.value, " is not a fraction in [0, 1]"));
  }
  for (size_t i = 0; i < n; ++i) {
    if (std::isnan(first_scores[i])) {
      return absl::InvalidArgumentError(StrCat("score of example ", i, " is NaN"));
    }
  }

  ThresholdSweep sweep;
  sweep.examples = static_cast<int64_t>(n);
  int64_t first_correct = 0;
  int64_t second_correct = 0;
  for (size_t i = 0; i < n; ++i) {
    first_correct += first_classes[i] == labels[i];
    second_correct += second_classes[i] == labels[i];
  }
  sweep.first_accuracy = Share(first_correct, sweep.examples);
  sweep.second_accuracy = Share(second_correct, sweep.examples);
  sweep.target_accuracy = target.kind == CascadeTarget::Kind::kAccuracy
                              ? target.value
                              : sweep.second_accuracy - target.value;

  // Examples by ascending score: a candidate escalates a prefix of this order.
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return first_scores[a] < first_scores[b]; });
  std::vector<double> candidates(first_scores.begin(), first_scores.end());
  candidates.push_back(0.0);
  candidates.push_back(1.0);
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());

  sweep.points.reserve(candidates.size());
  size_t escalated = 0;
  // Correct answers among the escalated examples: by the first variant, by the second.
  int64_t lost = 0;
  int64_t gained = 0;
  double previous = -std::numeric_limits<double>::infinity();
  for (double candidate : candidates) {
    while (escalated < n && first_scores[order[escalated]] < candidate) {
      const size_t i = order[escalated];
      lost += first_classes[i] == labels[i];
      gained += second_classes[i] == labels[i];
      ++escalated;
    }
    ThresholdPoint point;
    point.text = ShortestIn(previous, candidate);
    point.threshold = std::strtod(point.text.c_str(), nullptr);
    point.correct = first_correct - lost + gained;
    point.accuracy = Share(point.correct, sweep.examples);
    point.escalated = static_cast<int64_t>(escalated);
    point.escalated_share = Share(point.escalated, sweep.examples);
    sweep.points.push_back(std::move(point));
    previous = candidate;
  }

  // Escalations grow with the threshold, so the first point reaching the target escalates the
  // fewest; the loops keep the tie rules explicit all the same.
  int64_t chosen = -1;
  for (size_t i = 0; i < sweep.points.size(); ++i) {
    const ThresholdPoint& point = sweep.points[i];
    if (point.accuracy + kAccuracyTolerance < sweep.target_accuracy) continue;
    if (chosen < 0 || point.escalated < sweep.points[chosen].escalated) {
      chosen = static_cast<int64_t>(i);
    }
  }
  sweep.target_met = chosen >= 0;
  if (!sweep.target_met) {
    chosen = 0;
    for (size_t i = 1; i < sweep.points.size(); ++i) {
      const ThresholdPoint& point = sweep.points[i];
      const ThresholdPoint& best = sweep.points[chosen];
      if (point.correct > best.correct ||
          (point.correct == best.correct && point.escalated < best.escalated)) {
        chosen = static_cast<int64_t>(i);
      }
    }
  }
  sweep.chosen = chosen;
  return sweep;
}

std::vector<int64_t> PointsAroundChoice(const ThresholdSweep& sweep) {
  std::vector<int64_t> shown;
  if (sweep.points.empty()) return shown;
  const double center = sweep.points[sweep.chosen].escalated_share;
  for (double offset : {-0.10, -0.05, -0.02, -0.01, 0.0, 0.01, 0.02, 0.05, 0.10}) {
    if (offset == 0.0) {
      shown.push_back(sweep.chosen);
      continue;
    }
    const double wanted = center + offset;
    if (wanted < -1e-12 || wanted > 1 + 1e-12) continue;
    // Shares ascend with the index: the first point at or past the wanted share, or the one
    // before it, whichever is nearer.
    auto it = std::lower_bound(
        sweep.points.begin(), sweep.points.end(), wanted,
        [](const ThresholdPoint& point, double share) { return point.escalated_share < share; });
    int64_t index = it - sweep.points.begin();
    if (index == static_cast<int64_t>(sweep.points.size()) ||
        (index > 0 && wanted - sweep.points[index - 1].escalated_share <
                          sweep.points[index].escalated_share - wanted)) {
      --index;
    }
    shown.push_back(index);
  }
  std::sort(shown.begin(), shown.end());
  shown.erase(std::unique(shown.begin(), shown.end()), shown.end());
  return shown;
}

}  // namespace brigade::analyze
