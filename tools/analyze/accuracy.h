#ifndef BRIGADE_TOOLS_ANALYZE_ACCURACY_H_
#define BRIGADE_TOOLS_ANALYZE_ACCURACY_H_

// Accuracy of a served variant: every example of the evaluation set goes through the server (HTTP
// with the binary tensor extension, so the figures are those of the real serving path), the
// top-1 class of each answer is kept, and the predictions are scored
//   * against the labels (top-1 accuracy), or
//   * against a reference variant's predictions (agreement), when the set has no labels or the
//     user asks for agreement — the way to compare an INT8 or pruned variant with its FP32 parent.
//
// The model must have one input (the evaluation set feeds it) and an output whose last dimension
// holds one score per class (logits or probabilities; the largest wins, the first on ties).
//
// PredictConfidence answers, besides the class, how sure the model is of it: what a confidence
// cascade (a brigade_router with `routing.cascade`) scores to decide whether to escalate, computed
// the same way from the same answers (see ConfidenceRows).
//
// Thread safety: PredictClasses and PredictConfidence use the client it is given (one thread at a
// time, per client.h); the scoring functions are pure. Failure: the client's error for a failed
// request, INVALID_ARGUMENT for a model or answer that does not fit (names the model and tensor).

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/tensor.h"
#include "tools/analyze/eval_set.h"
#include "tools/client/client.h"

namespace brigade::analyze {

struct PredictOptions {
  std::string model{};
  // Output holding the class scores; empty = the model's first output.
  std::string output{};
  // Examples per request (capped by the caller at the model's max_batch_size); models without a
  // batch dimension always get one.
  int64_t batch_rows = 32;
  // Multiplier applied to the examples (see eval_set.h).
  double scale = 1.0;
};

// The top-1 class of each example, in order.
absl::StatusOr<std::vector<int32_t>> PredictClasses(client::Client& client,
                                                    const protocol::ModelMetadata& metadata,
                                                    const EvalSet& set,
                                                    const PredictOptions& options);

// The index of the largest value along the last dimension, for each row of a [rows, classes]
// (or [classes]) FP32/FP64/integer tensor; the first index wins a tie, NaN never wins.
absl::StatusOr<std::vector<int32_t>> ArgMaxRows(const Tensor& scores);

struct Confidence {
  int32_t top_class = 0;
  // The largest class score and the largest minus the second largest, on the softmax of the
  // row when it holds logits; 0 when the row gives no number to score (NaN).
  double max_probability = 0;
  double margin = 0;
};

// For each example, in order, its top-1 class (as PredictClasses) and its confidence.
// `softmax`: the output holds logits.
absl::StatusOr<std::vector<Confidence>> PredictConfidence(client::Client& client,
                                                          const protocol::ModelMetadata& metadata,
                                                          const EvalSet& set,
                                                          const PredictOptions& options,
                                                          bool softmax);

// The confidence of each row of a [rows, classes] (or [classes]) FP32 or FP64 tensor with at
// least two classes, as the cascade router computes it: top class as ArgMaxRows; p1 and p2 the
// two largest values (equal when the top is tied), or with `softmax` exp(x - top) / sum over the
// row for each; margin p1 - p2; a NaN score becomes 0 (no confidence).
absl::StatusOr<std::vector<Confidence>> ConfidenceRows(const Tensor& scores, bool softmax);

struct Score {
  int64_t examples = 0;
  int64_t correct = 0;
  // correct / examples; 0 when there are no examples.
  double accuracy = 0;
};

// Top-1 accuracy against labels, or agreement against reference predictions (any integer
// sequence of the same length). INVALID_ARGUMENT when the lengths differ.
absl::StatusOr<Score> ScorePredictions(std::span<const int32_t> predictions,
                                       std::span<const int64_t> expected);

}  // namespace brigade::analyze

#endif  // BRIGADE_TOOLS_ANALYZE_ACCURACY_H_
