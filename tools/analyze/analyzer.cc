#include "tools/analyze/analyzer.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "core/status_macros.h"
#include "core/strings.h"
#include "tools/analyze/analysis_json.h"
#include "tools/analyze/config_generator.h"
#include "tools/analyze/html_report.h"
#include "tools/analyze/machine_load.h"
#include "tools/analyze/point_repository.h"
#include "tools/analyze/summary_text.h"

namespace brigade::analyze {
namespace {

namespace fs = std::filesystem;

std::string DescribeLoad(const loadgen::BenchOptions& load) {
  if (load.mode == loadgen::LoadMode::kClosedLoop) {
    return StrCat("closed loop, concurrency ",
                  fmt::format("{}", fmt::join(load.concurrency, ", ")));
  }
  return StrCat(load.mode == loadgen::LoadMode::kPoisson ? "open loop (Poisson)"
                                                         : "open loop (constant rate)",
                ", ", fmt::format("{}", fmt::join(load.rates, ", ")), " requests/s");
}

// The 1-minute load average, NaN when the system does not say.
double LoadAverage() {
  double load = 0;
  return getloadavg(&load, 1) == 1 ? load : kNotMeasured;
}

absl::StatusOr<std::vector<BatchingPolicy>> ParsePolicies(const std::vector<std::string>& texts) {
  std::vector<BatchingPolicy> policies;
  for (const std::string& text : texts) {
    BRIGADE_ASSIGN_OR_RETURN(BatchingPolicy policy, ParseBatchingPolicy(text));
    policies.push_back(policy);
  }
  return policies;
}

}  // namespace

VariantSpec ParseVariantSpec(std::string_view text) {
  const size_t equals = text.find('=');
  if (equals == std::string_view::npos || equals == 0) return {"", std::string(text)};
  return {std::string(text.substr(0, equals)), std::string(text.substr(equals + 1))};
}

absl::StatusOr<Analysis> RunAnalysis(const AnalyzeOptions& options, SweepProgress* progress) {
  if (options.variants.empty()) return absl::InvalidArgumentError("no variants given");
  SweepSpace space;
  std::vector<config::ModelConfig> bases;
  for (const VariantSpec& spec : options.variants) {
    BRIGADE_ASSIGN_OR_RETURN(config::ModelConfig base,
                             ReadVariantConfig(spec.model_dir, spec.name));
    const bool duplicate = std::any_of(space.variants.begin(), space.variants.end(),
                                       [&](const Variant& v) { return v.name == base.name(); });
    if (duplicate) {
      return absl::InvalidArgumentError(
          StrCat("two variants are named '", base.name(), "'; name them with NAME=DIR"));
    }
    space.variants.push_back({.name = base.name(),
                              .model_dir = spec.model_dir,
                              .base_max_batch_size = base.max_batch_size()});
    bases.push_back(std::move(base));
  }

  SweepOptions sweep = options.sweep;
  BRIGADE_ASSIGN_OR_RETURN(EvalSet eval, LoadEvalSet(options.eval));
  if (!eval.labelled()) sweep.agreement = true;
  if (!sweep.reference.empty()) {
    const auto reference =
        std::find_if(space.variants.begin(), space.variants.end(),
                     [&](const Variant& v) { return v.name == sweep.reference; });
    if (reference == space.variants.end()) {
      return absl::InvalidArgumentError(
          StrCat("reference '", sweep.reference, "' is not one of the variants"));
    }
    // Swept first, so agreement has the reference's predictions before anyone else's.
    const size_t r = static_cast<size_t>(reference - space.variants.begin());
    std::rotate(space.variants.begin(), space.variants.begin() + r, space.variants.begin() + r + 1);
    std::rotate(bases.begin(), bases.begin() + r, bases.begin() + r + 1);
  } else if (sweep.agreement) {
    return absl::InvalidArgumentError(
        "agreement (or an evaluation set without labels) needs a reference variant");
  }

  space.cores = options.cores > 0
                    ? options.cores
                    : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  space.max_batch_sizes = options.max_batch_sizes;
  BRIGADE_ASSIGN_OR_RETURN(space.policies, ParsePolicies(options.policies));
  space.instance_counts = options.instance_counts;
  space.threads = options.threads;
  space.allow_oversubscription = options.allow_oversubscription;
  space.rows_per_request = sweep.load.inputs.batch_size;
  BRIGADE_ASSIGN_OR_RETURN(SweepPlan plan, PlanSweep(space));

  Analysis analysis;
  AnalysisSettings& settings = analysis.settings;
  settings.metric = sweep.agreement ? "agreement" : "labels";
  settings.reference = sweep.reference;
  settings.eval_description = eval.description;
  settings.eval_examples = eval.size();
  settings.load_description = DescribeLoad(sweep.load);
  settings.rows_per_request = sweep.load.inputs.batch_size;
  settings.warmup_s = sweep.load.warmup_ms / 1000.0;
  settings.duration_s = sweep.load.duration_ms / 1000.0;
  settings.cores = space.cores;
  settings.slo = options.slo;
  settings.goal = options.goal;
  settings.command_line = options.command_line;
  analysis.skipped = plan.skipped;

  settings.load_average_start = LoadAverage();
  const absl::StatusOr<CpuSample> cpu_before = SampleCpu();
  BRIGADE_ASSIGN_OR_RETURN(SweepResult result, RunSweep(space, plan, bases, eval, sweep, progress));
  const absl::StatusOr<CpuSample> cpu_after = SampleCpu();
  if (cpu_before.ok() && cpu_after.ok()) {
    settings.other_cores_busy = OtherCoresBusy(*cpu_before, *cpu_after);
  }
  analysis.variants = std::move(result.variants);
  analysis.configs = std::move(result.configs);
  analysis.points = std::move(result.points);
  Decide(&analysis);
  return analysis;
}

void Decide(Analysis* analysis) {
  std::vector<Objectives> objectives;
  objectives.reserve(analysis->points.size());
  for (const PointResult& point : analysis->points) objectives.push_back(point.objectives());
  analysis->frontier = ParetoFrontier(objectives);
  Slo slo = analysis->settings.slo;
  if (!analysis->settings.reference.empty()) {
    for (const VariantResult& variant : analysis->variants) {
      if (variant.name == analysis->settings.reference) slo.baseline_accuracy = variant.accuracy;
    }
  }
  analysis->settings.slo = slo;
  analysis->recommendation = Recommend(objectives, slo, analysis->settings.goal);
}

absl::StatusOr<OutputPaths> WriteOutputs(Analysis* analysis, const std::string& output_dir) {
  OutputPaths paths;
  const Recommendation& recommendation = analysis->recommendation;
  if (recommendation.status == Recommendation::Status::kChosen) {
    const PointResult& point = analysis->points[recommendation.chosen];
    const ConfigResult& config = analysis->configs[point.config];
    const VariantResult& variant = analysis->variants[static_cast<size_t>(config.config.variant)];
    const fs::path root = fs::path(output_dir) / "recommended";
    std::error_code error;
    fs::remove_all(root, error);
    if (error) {
      return absl::InternalError(StrCat("cannot clear ", root.string(), ": ", error.message()));
    }
    const std::string header = fmt::format(
        "Recommended by `brigade analyze` for {} (most {}):\n"
        "measured p99 {:.2f} ms, {:.1f} requests/s at {}, accuracy {:.4f}.\n"
        "Version folders and other files are links to {}.\n{}",
        SloText(analysis->settings.slo), GoalName(analysis->settings.goal), point.p99_ms,
        point.throughput_per_s, Analysis::LoadLabel(point), point.accuracy, variant.model_dir,
        GeneratedConfigHeader(config.variant, config.config));
    BRIGADE_ASSIGN_OR_RETURN(const config::ModelConfig base,
                             ReadVariantConfig(variant.model_dir, variant.name));
    BRIGADE_ASSIGN_OR_RETURN(const config::ModelConfig generated,
                             GenerateConfig(base, config.config));
    BRIGADE_RETURN_IF_ERROR(
        WritePointRepository(variant.model_dir, generated, header, root.string()));
    paths.config = (root / generated.name() / "config.pbtxt").string();
    analysis->recommended_config_path = paths.config;
  }
  paths.json = (fs::path(output_dir) / "analysis.json").string();
  paths.html = (fs::path(output_dir) / "report.html").string();
  BRIGADE_RETURN_IF_ERROR(WriteTextFile(paths.json, FormatAnalysisJson(*analysis)));
  BRIGADE_RETURN_IF_ERROR(WriteTextFile(paths.html, FormatHtmlReport(*analysis)));
  return paths;
}

}  // namespace brigade::analyze
