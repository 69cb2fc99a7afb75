#ifndef BRIGADE_TOOLS_ANALYZE_ANALYZER_H_
#define BRIGADE_TOOLS_ANALYZE_ANALYZER_H_

// The whole of `brigade analyze`: read the variants' configurations and the evaluation set, plan
// the sweep, run it against real servers (sweep_runner.h), compute the Pareto frontier over
// (p99, throughput, accuracy) and recommend the operating point for the SLO (pareto.h), then
// write the report (analysis.json, report.html) and the recommended config.pbtxt.
//
// Accuracy metric: top-1 against the labels when the evaluation set has them, otherwise (or with
// `agreement`) agreement with the reference variant's predictions. The SLO's accuracy drop is
// measured from the reference variant's accuracy when one is named, else from the best variant.
//
// Thread safety: RunAnalysis blocks the calling thread (progress is called from it); Decide and
// WriteOutputs are plain functions over an Analysis. Failure: INVALID_ARGUMENT for options that
// cannot work (no variants, unknown reference, unlabelled set without a reference, a variant
// whose config does not validate), NOT_FOUND for missing files; measurement failures are
// recorded in the Analysis instead.

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/analyze/analysis.h"
#include "tools/analyze/eval_set.h"
#include "tools/analyze/pareto.h"
#include "tools/analyze/sweep_runner.h"

namespace brigade::analyze {

struct VariantSpec {
  // Served under this name; empty = the config's name.
  std::string name{};
  std::string model_dir{};
};

// "NAME=DIR" or "DIR".
VariantSpec ParseVariantSpec(std::string_view text);

struct AnalyzeOptions {
  std::vector<VariantSpec> variants{};

  // The sweep axes (see sweep_space.h for the policy syntax).
  std::vector<int> max_batch_sizes = {1, 8};
  std::vector<std::string> policies = {"delay:200"};
  std::vector<int> instance_counts = {1};
  std::vector<int> threads = {0};
  // Cores of this machine; 0 = std::thread::hardware_concurrency().
  int cores = 0;
  bool allow_oversubscription = false;

  EvalSetOptions eval{};
  // Load, server and accuracy settings; `sweep.agreement` is forced on for unlabelled sets.
  SweepOptions sweep{};

  Slo slo{};
  Goal goal = Goal::kMaxThroughput;
  // Recorded in the report.
  std::string command_line{};
};

absl::StatusOr<Analysis> RunAnalysis(const AnalyzeOptions& options, SweepProgress* progress);

// Fills analysis->frontier and analysis->recommendation from its points and settings.
void Decide(Analysis* analysis);

struct OutputPaths {
  std::string json{};
  std::string html{};
  // Empty when nothing was recommended.
  std::string config{};
};

// Writes <dir>/analysis.json, <dir>/report.html and, when a point was chosen, the repository
// <dir>/recommended/<model>/ (its config.pbtxt, with links to the variant's version folders, so
// `brigade serve --model-repository <dir>/recommended` serves it as measured). The config's path
// is recorded in analysis->recommended_config_path first, so the reports name it.
absl::StatusOr<OutputPaths> WriteOutputs(Analysis* analysis, const std::string& output_dir);

}  // namespace brigade::analyze

#endif  // BRIGADE_TOOLS_ANALYZE_ANALYZER_H_
