#ifndef BRIGADE_OPTIMIZE_GATE_H_
#define BRIGADE_OPTIMIZE_GATE_H_

// The accuracy gate and timing for a candidate model that was made outside the engine (a pruned
// or distilled model exported by a recipe), against the fp32 model it replaces: both run on
// Brigade's engine over the same evaluation set, compared as quantize_job.h compares INT8 (top-1
// accuracy with labels, top-1 agreement without; evaluate.h), timed at each of `time_batches`
// (the median of `time_iterations` runs), and their Conv/Gemm/MatMul widths listed side by side
// (the channels a pruning removed, read from the weights the engine loads).
//
// The candidate must take the same input (per-sample shape) and give the same number of outputs
// per row as the reference, or it is INVALID_ARGUMENT naming both files. The gate passes when
// the drop is at most max_accuracy_drop points; a miss is not an error (GateReport::passed).
//
// Thread safety: a free function. Errors: NOT_FOUND / INVALID_ARGUMENT naming the file or the
// flag at fault (--eval, --eval-labels, the model files).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/clock.h"
#include "onnx/onnx_pb.h"
#include "optimize/evaluate.h"

namespace brigade::optimize {

struct GateOptions {
  std::string reference_path;    // the fp32 model
  std::string candidate_path;    // the model to judge
  std::string eval_path;         // required
  std::string eval_labels_path;  // empty: agreement with the reference
  int64_t eval_samples = 0;      // 0: all
  double integer_scale = 1.0 / 255.0;
  double max_accuracy_drop = 1.0;  // points
  int threads = 1;
  int64_t eval_batch = 16;
  std::vector<int64_t> time_batches = {1, 8};
  int time_iterations = 20;  // 0 skips timing
  const Clock* clock = Clock::Real();
};

// One weight layer (Conv, Gemm, MatMul with a constant weight) of each model, matched in graph
// order: the recipes re-export under new node names, so names do not match, order does.
struct LayerWidth {
  std::string op_type;
  std::string reference_node;
  int64_t reference = 0;  // output channels / features
  int64_t candidate = 0;
};

struct BatchTiming {
  int64_t batch = 0;
  double reference_us = 0;  // median
  double candidate_us = 0;
};

struct GateReport {
  Comparison comparison;
  bool passed = false;
  std::vector<LayerWidth> widths;
  int64_t reference_parameters = 0, candidate_parameters = 0;  // initializer elements
  int64_t reference_bytes = 0, candidate_bytes = 0;
  std::vector<BatchTiming> timings;

  // The human report's lines (layers, parameters, accuracy, agreement, latency, gate), the
  // candidate called `label` ("prune", "candidate"); `threads` as timed.
  std::string Text(std::string_view label, double max_accuracy_drop, int threads) const;
  // The same as JSON object members, without the braces (callers add their own members).
  std::string JsonFields() const;
};

absl::StatusOr<GateReport> GateCandidate(const GateOptions& options);

struct WeightLayer {
  std::string node;
  std::string op_type;
  int64_t width = 0;  // output channels (Conv) or features (Gemm, MatMul)
};

// Every weight layer of `model` (its weight an initializer), in graph order.
std::vector<WeightLayer> WeightLayers(const ::onnx::ModelProto& model);

// Reads and parses an ONNX file; `flag` (may be empty) prefixes the errors.
absl::StatusOr<::onnx::ModelProto> ReadOnnxModel(const std::string& path, std::string_view flag);

}  // namespace brigade::optimize

#endif  // BRIGADE_OPTIMIZE_GATE_H_
