#ifndef BRIGADE_TOOLS_ANALYZE_CASCADE_THRESHOLD_H_
#define BRIGADE_TOOLS_ANALYZE_CASCADE_THRESHOLD_H_

// The threshold of a confidence cascade (a brigade_router's `routing.cascade`), learned on a
// labelled set: given, for each example, the first variant's class and score (its top
// probability or margin, as the router scores it: accuracy.h ConfidenceRows), the second
// variant's class and the label, SweepThresholds computes the cascade's accuracy and escalated
// share at every threshold that splits the examples differently, and chooses one.
//
// The router escalates an example when its score is below the threshold. The candidates are
// the distinct scores plus 0 and 1, ascending; candidate t escalates every example scoring below
// t, as does every threshold in (previous candidate, t]. The threshold reported for a candidate
// is the shortest decimal in that interval (0.9731 rather than 0.97310234...), so it can be
// written into a config and splits the examples exactly as the candidate does.
//
// The choice: among the candidates whose accuracy reaches the target, the one escalating the
// fewest examples (the lower threshold on a tie); when none does, the most accurate one (then
// the fewest escalations) and `target_met` false. The target is an accuracy, or a drop allowed
// from the second variant's accuracy alone (what the cascade trades against always escalating).
// Accuracies compare with a tolerance of 1e-9, so a target written as 0.9172 is met by
// 9172 / 10000.
//
// Thread safety: pure functions. Failure: INVALID_ARGUMENT for sequences of different lengths,
// an empty set, a NaN score (naming its index) or a target outside [0, 1].

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace brigade::analyze {

struct CascadeTarget {
  enum class Kind { kAccuracy, kMaxDropFromSecond };
  Kind kind = Kind::kAccuracy;
  // An accuracy, or a drop (both as fractions: 0.002 = 0.2 points).
  double value = 0;
};

struct ThresholdPoint {
  // The shortest decimal text splitting as this candidate does, and its value.
  std::string text{};
  double threshold = 0;
  int64_t correct = 0;
  double accuracy = 0;
  int64_t escalated = 0;
  double escalated_share = 0;
};

struct ThresholdSweep {
  int64_t examples = 0;
  double first_accuracy = 0;
  double second_accuracy = 0;
  // The accuracy the choice had to reach (the target, resolved against the second variant).
  double target_accuracy = 0;
  // Every candidate, ascending.
  std::vector<ThresholdPoint> points{};
  // Index into points.
  int64_t chosen = 0;
  bool target_met = false;
};

// first_classes[i], first_scores[i]: the first variant on example i; second_classes[i]: the
// second variant; labels[i]: the truth.
absl::StatusOr<ThresholdSweep> SweepThresholds(std::span<const int32_t> first_classes,
                                               std::span<const double> first_scores,
                                               std::span<const int32_t> second_classes,
                                               std::span<const int64_t> labels,
                                               const CascadeTarget& target);

// Indexes of the points to show around the chosen one: the nearest candidates to the chosen
// escalated share -10, -5, -2, -1, 0, +1, +2, +5, +10 points, ascending and without repeats.
std::vector<int64_t> PointsAroundChoice(const ThresholdSweep& sweep);

}  // namespace brigade::analyze

#endif  // BRIGADE_TOOLS_ANALYZE_CASCADE_THRESHOLD_H_
