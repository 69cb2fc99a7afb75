#ifndef BRIGADE_OPTIMIZE_QUANTIZE_JOB_H_
#define BRIGADE_OPTIMIZE_QUANTIZE_JOB_H_

// What `brigade optimize quantize` does, start to end, as one library call so the verb stays
// thin and tests can drive it:
//
//   load MODEL ─► [calibrate on --calibration (static)] ─► quantize ─► evaluate fp32 vs INT8 on
//   --eval (labels: top-1; else agreement) ─► [per-layer sensitivity] ─► [fallback: keep the
//   most sensitive layers fp32 until the gate holds] ─► time both on the engine ─► gate ─► write
//
// --mode bf16 follows the same steps with the bf16-marked model (quantizer.h) as the candidate:
// no calibration, no per-layer steps (the precision is the whole model's).
//
// The gate: the INT8 model is written only when its drop (evaluate.h) is at most
// max_accuracy_drop points, or with `force`. Without evaluation data the drop is unknown and
// the model is written only with `force`. The output is written to a temporary file in the
// output's directory and renamed over it at the end, so a failure leaves nothing half-written.
//
// Timing runs both models on the engine at batch 1 with `threads` threads; an INT8 model that is
// not faster than fp32 is flagged in the report (oneDNN's INT8 kernels are exact, hence used,
// only on CPUs with VNNI; on an AVX2-only CPU the engine runs QDQ models in float).
//
// With --register the written model also becomes a new model or version of a repository, its
// config carrying the measurements (register.h); a model flagged slower only with `force`.
//
// Thread safety: a free function. Errors: NOT_FOUND / INVALID_ARGUMENT naming the file or field
// at fault (the model, --calibration, --eval, --eval-labels, -o); a gate miss is not an error
// (QuantizeReport::written is false).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/clock.h"
#include "optimize/calibration.h"
#include "optimize/evaluate.h"
#include "optimize/quantizer.h"
#include "optimize/register.h"

namespace brigade::optimize {

struct QuantizeJobOptions {
  std::string model_path;
  std::string output_path;
  QuantizeOptions quantize;
  CalibrationOptions calibration;
  std::string calibration_path;  // required in static mode
  int64_t calibration_samples = 256;
  std::string eval_path;         // empty: the calibration data (agreement only)
  std::string eval_labels_path;  // empty: agreement
  int64_t eval_samples = 0;      // 0: all
  // > 0: evaluate by agreement on this many random samples of every input
  // (ModelRunner::RandomSamples), for models a data set cannot feed (several inputs); not with
  // eval_path.
  int64_t eval_random = 0;
  double integer_scale = 1.0 / 255.0;  // integer data → fp32 (dataset.h)
  double max_accuracy_drop = 1.0;      // points
  bool force = false;
  bool sensitivity = false;  // per-layer report (also run by fallback)
  int64_t sensitivity_samples = 200;
  bool fallback = false;  // keep sensitive layers fp32 until the gate holds
  int threads = 1;
  int64_t batch = 16;
  int time_iterations = 20;  // 0 skips timing
  const Clock* clock = Clock::Real();
  // --register REPO [--register-name NAME]: also place the written model in a repository
  // (register.h), named after -o's file stem by default; one flagged `slower` only with force.
  std::string register_repository;
  std::string register_name;
};

struct LayerSensitivity {
  std::string node;
  std::string op_type;
  double drop_points = 0;  // quantizing this layer alone
  double top1_agreement = 0;
  double mean_cosine = 1;
};

// Most sensitive first: the larger drop, then (among equal drops) the lower mean cosine, then the
// lower agreement; graph order among full ties. A drop counts whole rows (one row of 200 is half
// a point), so many layers tie on it, and most on a model whose classes nearly tie (random
// weights): the cosine, which every change moves, tells them apart.
void RankBySensitivity(std::vector<LayerSensitivity>* layers);

// One step of the fallback: `node` went back to fp32, and `after` is the model's comparison with
// fp32 once it had.
struct FallbackStep {
  std::string node;
  Comparison after;
};

struct QuantizeReport {
  QuantizeResult quantized;  // the model as written (or refused)
  RangeMap ranges;
  std::optional<Comparison> comparison;
  std::vector<LayerSensitivity> sensitivity;  // most sensitive first
  std::vector<std::string> fallback_fp32;     // layers the fallback kept in fp32
  std::vector<FallbackStep> fallback_steps;   // in the order they went back
  QuantMode mode = QuantMode::kStatic;
  // int8_*: the candidate's (the INT8 model, or the bf16 one in mode kBf16).
  std::optional<double> fp32_us, int8_us;  // median at batch 1
  int64_t fp32_bytes = 0, int8_bytes = 0;
  bool gate_passed = false;
  bool evaluated = false;
  bool written = false;
  bool slower = false;  // the candidate not faster than fp32 on the engine
  std::optional<Registration> registration;
  std::string not_registered;  // why, when --register was asked and it did not happen

  // The human report (what the verb prints).
  std::string Text(const QuantizeJobOptions& options) const;
  // The same as one JSON object.
  std::string Json() const;
};

absl::StatusOr<QuantizeReport> RunQuantizeJob(const QuantizeJobOptions& options);

// Writes `bytes` to `path` through a temporary file in the same directory and a rename.
absl::Status WriteFileAtomically(const std::string& path, const std::string& bytes);

}  // namespace brigade::optimize

#endif  // BRIGADE_OPTIMIZE_QUANTIZE_JOB_H_
