#ifndef BRIGADE_TOOLS_ANALYZE_ANALYSIS_H_
#define BRIGADE_TOOLS_ANALYZE_ANALYSIS_H_

// The results of `brigade analyze`, as plain values: what was swept, what each variant scored,
// what each serving configuration measured at each load level, the Pareto frontier and the
// recommendation. The sweep (sweep_runner.h) fills the measurements, the analyzer (analyzer.h)
// the frontier and the recommendation; the JSON and HTML writers only read it.
//
// Units: latencies in ms, throughput in requests/s (rows/s = × rows_per_request), accuracy as a
// fraction. A measurement that failed holds NaN and an error text.

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "tools/analyze/pareto.h"
#include "tools/analyze/sweep_space.h"
#include "tools/loadgen/bench_runner.h"
#include "tools/loadgen/server_breakdown.h"

namespace brigade::analyze {

inline constexpr double kNotMeasured = std::numeric_limits<double>::quiet_NaN();

struct VariantResult {
  std::string name{};
  std::string model_dir{};
  // From the variant's config ("pytorch_libtorch", "onnxruntime_onnx", backend name...).
  std::string platform{};
  int base_max_batch_size = 0;
  // Top-1 accuracy on the labels, or agreement with the reference variant.
  double accuracy = kNotMeasured;
  int64_t examples = 0;
  int64_t correct = 0;
  double eval_seconds = 0;
  std::string error{};
};

// One serving configuration as run.
struct ConfigResult {
  ServingConfig config{};
  std::string variant{};
  // The generated config.pbtxt (empty when generation failed).
  std::string config_text{};
  // Seconds from spawning the server to its readiness (model loading).
  double server_start_s = kNotMeasured;
  std::string error{};
};

// One configuration at one load level: the unit the frontier is computed over.
struct PointResult {
  // Index into Analysis::configs.
  size_t config = 0;
  loadgen::LoadMode mode = loadgen::LoadMode::kClosedLoop;
  int concurrency = 0;
  double target_rate_per_s = 0;
  double p50_ms = kNotMeasured;
  double p90_ms = kNotMeasured;
  double p99_ms = kNotMeasured;
  double mean_ms = kNotMeasured;
  double throughput_per_s = kNotMeasured;
  int64_t ok = 0;
  int64_t failed = 0;
  std::optional<loadgen::ServerBreakdown> server{};
  // The variant's accuracy (copied, so a point carries all three objectives).
  double accuracy = kNotMeasured;
  std::string error{};

  Objectives objectives() const { return {p99_ms, throughput_per_s, accuracy}; }
};

// What the run was asked to do, for the reports.
struct AnalysisSettings {
  // "labels" or "agreement".
  std::string metric = "labels";
  // Agreement (or drop baseline) reference variant; empty when none.
  std::string reference{};
  std::string eval_description{};
  int64_t eval_examples = 0;
  std::string load_description{};
  int64_t rows_per_request = 1;
  double warmup_s = 0;
  double duration_s = 0;
  int cores = 1;
  // Other work on the machine, which makes latencies noisy: the 1-minute load average when the
  // sweep began, and the cores' worth of CPU time processes other than the sweep's used during it
  // (machine_load.h). NaN when unavailable.
  double load_average_start = kNotMeasured;
  double other_cores_busy = kNotMeasured;
  Slo slo{};
  Goal goal = Goal::kMaxThroughput;
  std::string command_line{};
};

struct Analysis {
  AnalysisSettings settings{};
  std::vector<VariantResult> variants{};
  std::vector<ConfigResult> configs{};
  std::vector<SkippedConfig> skipped{};
  std::vector<PointResult> points{};
  // Indices into points.
  std::vector<size_t> frontier{};
  Recommendation recommendation{};
  // Where the recommended config.pbtxt was written (empty when none).
  std::string recommended_config_path{};

  // "fashion_mnist mb=8 delay:200 i=1 t=1 @ c=4".
  std::string PointLabel(size_t point) const;
  // "c=4" or "poisson 100/s".
  static std::string LoadLabel(const PointResult& point);
};

// Whether `point` is in `sorted`, an ascending list of indices into Analysis::points (the
// frontier, a recommendation's feasible points).
bool ListsPoint(const std::vector<size_t>& sorted, size_t point);

}  // namespace brigade::analyze

#endif  // BRIGADE_TOOLS_ANALYZE_ANALYSIS_H_
