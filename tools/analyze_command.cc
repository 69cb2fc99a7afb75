// `brigade analyze`: the variant × serving-configuration sweep and its Pareto report (Model
// Analyzer's job, with an accuracy axis). Parses flags into analyze::AnalyzeOptions, runs
// analyze::RunAnalysis, writes the outputs and prints the summary; everything else lives in
// tools/analyze.

#include <stdlib.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/status_macros.h"
#include "core/strings.h"
#include "tools/analyze/analyzer.h"
#include "tools/analyze/summary_text.h"
#include "tools/analyze/sweep_progress.h"
#include "tools/client/bearer_token.h"
#include "tools/command.h"

namespace brigade::tools {
namespace {

// Exit status when the sweep ran but no point meets the SLO.
constexpr int kNoPointMeetsSlo = 3;

struct AnalyzeFlags {
  std::vector<std::string> variants;
  std::string eval_inputs;
  std::string eval_labels;
  int64_t eval_limit = 0;
  double eval_scale = std::nan("");
  int64_t eval_batch = 32;
  std::string output_name;
  std::string reference;
  bool agreement = false;

  std::vector<int> max_batch = {1, 8};
  std::vector<std::string> batching = {"delay:200"};
  std::vector<int> instances = {1};
  std::vector<int> threads = {0};
  int cores = 0;
  bool allow_oversubscription = false;

  std::vector<int> concurrency = {1, 4};
  std::vector<double> rates;
  std::string arrival = "constant";
  int open_loop_workers = 32;
  int64_t batch_size = 1;
  double warmup_s = 0.5;
  double duration_s = 2.0;
  int load_samples = 64;
  int64_t timeout_ms = 30'000;
  // The bearer token's file; empty: BRIGADE_TOKEN, if set.
  std::string auth_token_file;

  double slo_p99_ms = std::numeric_limits<double>::infinity();
  double max_accuracy_drop = std::numeric_limits<double>::infinity();
  double min_throughput = 0;
  std::string objective = "throughput";

  std::string output_dir = "analysis";
  std::string work_dir;
  bool keep_work_dir = false;
  std::string brigade_binary;
  std::vector<std::string> serve_args;
  double server_start_timeout_s = 120;
  bool progress = false;
  bool no_progress = false;
};

// This process's command line, for the report (from /proc, as CLI11 keeps no copy).
std::string CommandLine() {
  std::ifstream file("/proc/self/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  std::string text;
  for (char c : raw) text += c == '\0' ? ' ' : c;
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

std::string SelfExecutable() {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::string("brigade") : self.string();
}

absl::StatusOr<std::string> MakeWorkDir(const std::string& requested) {
  if (!requested.empty()) return requested;
  std::string pattern = (std::filesystem::temp_directory_path() / "brigade-analyze-XXXXXX");
  if (mkdtemp(pattern.data()) == nullptr) {
    return absl::InternalError("cannot create a temporary work folder");
  }
  return pattern;
}

absl::StatusOr<analyze::AnalyzeOptions> ToOptions(const AnalyzeFlags& flags) {
  analyze::AnalyzeOptions options;
  // Before the work folder is made, so a refused token file leaves nothing behind.
  BRIGADE_ASSIGN_OR_RETURN(
      options.sweep.load.client.bearer_token,
      client::ResolveBearerToken(flags.auth_token_file,
                                 std::getenv(client::kTokenEnvironmentVariable)));
  for (const std::string& text : flags.variants) {
    options.variants.push_back(analyze::ParseVariantSpec(text));
  }
  options.max_batch_sizes = flags.max_batch;
  options.policies = flags.batching;
  options.instance_counts = flags.instances;
  options.threads = flags.threads;
  options.cores = flags.cores;
  options.allow_oversubscription = flags.allow_oversubscription;

  options.eval.inputs_path = flags.eval_inputs;
  options.eval.labels_path = flags.eval_labels;
  options.eval.limit = flags.eval_limit;

  analyze::SweepOptions& sweep = options.sweep;
  sweep.brigade_binary = flags.brigade_binary.empty() ? SelfExecutable() : flags.brigade_binary;
  sweep.serve_args = flags.serve_args;
  BRIGADE_ASSIGN_OR_RETURN(sweep.work_dir, MakeWorkDir(flags.work_dir));
  sweep.keep_work_dir = flags.keep_work_dir;
  sweep.server_start_timeout_ms = static_cast<int64_t>(flags.server_start_timeout_s * 1000);
  sweep.reference = flags.reference;
  sweep.agreement = flags.agreement;
  sweep.output_name = flags.output_name;
  sweep.eval_batch_rows = flags.eval_batch;
  sweep.eval_scale = flags.eval_scale;
  sweep.load_samples = flags.load_samples;

  loadgen::BenchOptions& load = sweep.load;
  load.client.timeout_ms = flags.timeout_ms;
  load.concurrency = flags.concurrency;
  if (!flags.rates.empty()) {
    load.mode =
        flags.arrival == "poisson" ? loadgen::LoadMode::kPoisson : loadgen::LoadMode::kConstantRate;
    load.rates = flags.rates;
  }
  load.open_loop_workers = flags.open_loop_workers;
  load.warmup_ms = static_cast<int64_t>(flags.warmup_s * 1000);
  load.duration_ms = static_cast<int64_t>(flags.duration_s * 1000);
  load.inputs.batch_size = flags.batch_size;

  options.slo.max_p99_ms = flags.slo_p99_ms;
  options.slo.max_accuracy_drop = flags.max_accuracy_drop;
  options.slo.min_throughput_per_s = flags.min_throughput;
  options.goal = flags.objective == "latency"    ? analyze::Goal::kMinLatency
                 : flags.objective == "accuracy" ? analyze::Goal::kMaxAccuracy
                                                 : analyze::Goal::kMaxThroughput;
  options.command_line = CommandLine();
  return options;
}

int RunAnalyzeCommand(const AnalyzeFlags& flags) {
  absl::StatusOr<analyze::AnalyzeOptions> options = ToOptions(flags);
  if (!options.ok()) {
    fmt::print(stderr, "brigade analyze: {}\n", options.status().message());
    return 2;
  }
  const bool show_progress = !flags.no_progress && (flags.progress || isatty(STDERR_FILENO));
  std::unique_ptr<analyze::ProgressBar> progress;
  if (show_progress) progress = std::make_unique<analyze::ProgressBar>(stderr);
  absl::StatusOr<analyze::Analysis> analysis = analyze::RunAnalysis(*options, progress.get());
  if (flags.work_dir.empty() && !flags.keep_work_dir) {
    // The temporary folder made above, when a failure left it behind empty.
    std::error_code ignored;
    std::filesystem::remove(options->sweep.work_dir, ignored);
  }
  if (!analysis.ok()) {
    fmt::print(stderr, "brigade analyze: {}\n", analysis.status().message());
    return 1;
  }
  absl::StatusOr<analyze::OutputPaths> paths = analyze::WriteOutputs(&*analysis, flags.output_dir);
  if (!paths.ok()) {
    fmt::print(stderr, "brigade analyze: {}\n", paths.status().message());
    return 1;
  }
  fmt::print("{}\nmachine: {}\n\n{}\nreport: {}\njson:   {}\n",
             analyze::FormatPointTable(*analysis), analyze::MachineText(analysis->settings),
             analyze::RecommendationText(*analysis), paths->html, paths->json);
  return analysis->recommendation.status == analyze::Recommendation::Status::kChosen
             ? 0
             : kNoPointMeetsSlo;
}

}  // namespace

void RegisterAnalyzeCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<AnalyzeFlags>();
  CLI::App* analyze = app.add_subcommand(
      "analyze",
      "Sweep model variants × serving configurations on real servers; report the latency / "
      "throughput / accuracy Pareto frontier and recommend an operating point for an SLO "
      "(exit 0: recommended, 3: no point meets the SLO)");
  analyze->add_option(
      "variants,--variant", flags->variants,
      "Model directory of a variant (config.pbtxt + versions), or NAME=DIR to serve "
      "it under NAME (repeatable; required unless `analyze cascade`)");
  analyze->add_option(
      "--eval-inputs", flags->eval_inputs,
      "Evaluation examples: IDX (gzip or not, e.g. t10k-images-idx3-ubyte.gz) or "
      ".npy, examples along the first dimension (required unless `analyze cascade`)");
  analyze->add_option("--eval-labels", flags->eval_labels,
                      "Labels (IDX or .npy of integers); without them accuracy is agreement with "
                      "--reference");
  analyze->add_option("--eval-limit", flags->eval_limit, "Use the first N examples (0 = all)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  analyze->add_option("--eval-scale", flags->eval_scale,
                      "Multiply examples by this (default: 1/255 for UINT8 into a float input, "
                      "else 1)");
  analyze->add_option("--eval-batch", flags->eval_batch, "Examples per accuracy request")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  analyze->add_option("--output-name", flags->output_name,
                      "Output holding the class scores (default: the first output)");
  analyze->add_option("--reference", flags->reference,
                      "Reference variant: accuracy drop is measured from it (and agreement "
                      "against it)");
  analyze->add_flag("--agreement", flags->agreement,
                    "Score agreement with --reference even when labels are given");

  analyze->add_option("--max-batch", flags->max_batch, "max_batch_size values (e.g. 1,8,32)")
      ->delimiter(',')
      ->capture_default_str();
  analyze
      ->add_option("--batching", flags->batching,
                   "Batching policies: none, delay:US (dynamic_batching), p99:US (adaptive "
                   "P99_MODEL), formula[:US] (adaptive QUEUE_FORMULA)")
      ->delimiter(',')
      ->capture_default_str();
  analyze->add_option("--instances", flags->instances, "instance_group count values")
      ->delimiter(',')
      ->capture_default_str();
  analyze
      ->add_option("--threads", flags->threads,
                   "intra_op_threads values (0 = server default: cores / instances)")
      ->delimiter(',')
      ->capture_default_str();
  analyze->add_option("--cores", flags->cores, "Cores to plan for (0 = this machine's)")
      ->check(CLI::NonNegativeNumber);
  analyze->add_flag("--allow-oversubscription", flags->allow_oversubscription,
                    "Keep points with instances × threads above the cores");

  analyze
      ->add_option("--concurrency", flags->concurrency,
                   "Closed loop: concurrent requests, one level per value")
      ->delimiter(',')
      ->capture_default_str();
  analyze->add_option("--rate", flags->rates, "Open loop: requests/s, one level per value")
      ->delimiter(',');
  analyze->add_option("--arrival", flags->arrival, "Open loop: constant or poisson")
      ->check(CLI::IsMember({"constant", "poisson"}))
      ->capture_default_str();
  analyze->add_option("--open-loop-workers", flags->open_loop_workers, "Open loop: connections")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  analyze->add_option("-b,--batch-size", flags->batch_size, "Rows per load request")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  analyze->add_option("--warmup-s", flags->warmup_s, "Warm-up seconds per level")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  analyze->add_option("--duration-s", flags->duration_s, "Measurement seconds per level")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  analyze
      ->add_option("--load-samples", flags->load_samples,
                   "Distinct requests (from the evaluation set) the load cycles through")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  analyze->add_option("--timeout-ms", flags->timeout_ms, "Per-request timeout")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  analyze->add_option("--auth-token-file", flags->auth_token_file,
                      "File holding the bearer token to send to the servers (mode 600), which "
                      "take theirs with --serve-arg=--auth-token-file=FILE; default: the "
                      "BRIGADE_TOKEN environment variable, if set");

  analyze->add_option("--slo-p99-ms", flags->slo_p99_ms, "SLO: p99 latency bound (ms)")
      ->check(CLI::PositiveNumber);
  analyze
      ->add_option("--max-accuracy-drop", flags->max_accuracy_drop,
                   "SLO: largest accuracy loss from the reference (or best) variant, as a "
                   "fraction (0.01 = one point)")
      ->check(CLI::NonNegativeNumber);
  analyze->add_option("--min-throughput", flags->min_throughput, "SLO: requests/s at least")
      ->check(CLI::NonNegativeNumber);
  analyze
      ->add_option("--objective", flags->objective,
                   "Among points meeting the SLO pick the most throughput, the lowest "
                   "latency or the best accuracy")
      ->check(CLI::IsMember({"throughput", "latency", "accuracy"}))
      ->capture_default_str();

  analyze
      ->add_option("-o,--output-dir", flags->output_dir,
                   "Writes analysis.json, report.html and recommended/<model>/config.pbtxt here")
      ->capture_default_str();
  analyze->add_option("--work-dir", flags->work_dir,
                      "Folder for the generated repositories (default: a new temporary one)");
  analyze->add_flag("--keep-work-dir", flags->keep_work_dir,
                    "Keep the generated repositories and load inputs");
  analyze->add_option("--brigade", flags->brigade_binary,
                      "The brigade executable to serve with (default: this one)");
  analyze->add_option("--serve-arg", flags->serve_args,
                      "Extra `brigade serve` argument (repeatable; write --serve-arg=--flag=v)");
  analyze
      ->add_option("--server-start-timeout-s", flags->server_start_timeout_s,
                   "How long a server may take to load its model")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  analyze->add_flag("--progress", flags->progress, "Show the progress bar even without a TTY");
  analyze->add_flag("--no-progress", flags->no_progress, "Never show the progress bar");
  RegisterAnalyzeCascadeCommand(*analyze, exit_code);
  analyze->callback([analyze, flags, exit_code] {
    // `analyze cascade` ran instead of the sweep.
    if (!analyze->get_subcommands().empty()) return;
    if (flags->variants.empty() || flags->eval_inputs.empty()) {
      fmt::print(stderr, "brigade analyze: {} is required (see --help)\n",
                 flags->variants.empty() ? "a variant" : "--eval-inputs");
      *exit_code = 2;
      return;
    }
    *exit_code = RunAnalyzeCommand(*flags);
  });
}

const CommandRegistration kAnalyzeRegistration(40, RegisterAnalyzeCommand);

}  // namespace brigade::tools
