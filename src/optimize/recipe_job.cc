#include "optimize/recipe_job.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <utility>
#include <vector>

#include "core/status_macros.h"
#include "core/strings.h"
#include "optimize/recipe.h"

namespace brigade::optimize {
namespace {

namespace fs = std::filesystem;

// Removes a path (file or folder) when it goes out of scope, unless released.
class RemoveOnExit {
 public:
  explicit RemoveOnExit(fs::path path) : path_(std::move(path)) {}
  ~RemoveOnExit() {
    if (path_.empty()) return;
    std::error_code error;
    fs::remove_all(path_, error);
  }
  RemoveOnExit(const RemoveOnExit&) = delete;
  RemoveOnExit& operator=(const RemoveOnExit&) = delete;

 private:
  fs::path path_;
};

fs::path DirOf(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? fs::path(".") : parent;
}

absl::Status NeedDirectory(const std::string& path, std::string_view flag) {
  std::error_code error;
  if (!fs::is_directory(DirOf(path), error)) {
    return absl::NotFoundError(
        StrCat(flag, ": directory '", DirOf(path).string(), "' does not exist"));
  }
  return absl::OkStatus();
}

absl::Status NeedFile(const std::string& path, std::string_view flag, std::string_view what) {
  if (path.empty()) return absl::InvalidArgumentError(StrCat(flag, ": ", what, " is required"));
  std::error_code error;
  if (!fs::is_regular_file(path, error)) {
    return absl::NotFoundError(StrCat(flag, ": cannot read '", path, "'"));
  }
  return absl::OkStatus();
}

std::string RegisteredName(const RecipeJobOptions& o) {
  return o.register_name.empty() ? fs::path(o.output_path).stem().string() : o.register_name;
}

std::string RecipeDescription(const RecipeJobOptions& o) {
  std::string text(RecipeName(o.kind));
  for (const std::string& a : o.recipe_args) text += StrCat(" ", a);
  return text;
}

std::vector<std::pair<std::string, std::string>> Measurements(const RecipeJobOptions& o,
                                                              const GateReport& gate) {
  const Comparison& c = gate.comparison;
  std::vector<std::pair<std::string, std::string>> fields = {
      {"recipe", RecipeDescription(o)},
      {"source_model", o.model_path},
      {"eval_rows", StrCat(c.rows)},
      {"top1_agreement", fmt::format("{:.4f}", c.top1_agreement)},
      {"drop_points", fmt::format("{:.2f}", c.drop_points())},
      {"max_accuracy_drop", fmt::format("{:.2f}", o.max_accuracy_drop)},
      {"gate_passed", gate.passed ? "true" : "false"},
  };
  if (c.candidate_top1.has_value()) {
    fields.emplace_back("accuracy_top1", fmt::format("{:.4f}", *c.candidate_top1));
    fields.emplace_back("fp32_accuracy_top1", fmt::format("{:.4f}", *c.reference_top1));
  }
  for (const BatchTiming& t : gate.timings) {
    fields.emplace_back(StrCat("latency_us_batch", t.batch), fmt::format("{:.1f}", t.candidate_us));
    fields.emplace_back(StrCat("fp32_latency_us_batch", t.batch),
                        fmt::format("{:.1f}", t.reference_us));
  }
  fields.emplace_back("threads", StrCat(o.threads));
  fields.emplace_back("parameters", StrCat(gate.candidate_parameters));
  return fields;
}

absl::Status Validate(const RecipeJobOptions& o) {
  if (o.output_path.empty()) return absl::InvalidArgumentError("-o: an output path is required");
  BRIGADE_RETURN_IF_ERROR(NeedDirectory(o.output_path, "-o"));
  if (!o.torchscript_path.empty()) {
    BRIGADE_RETURN_IF_ERROR(NeedDirectory(o.torchscript_path, "--torchscript"));
  }
  BRIGADE_RETURN_IF_ERROR(NeedFile(o.train_path, "--train", "a training set (.npy or IDX)"));
  BRIGADE_RETURN_IF_ERROR(
      NeedFile(o.train_labels_path, "--train-labels", "the training set's labels"));
  BRIGADE_RETURN_IF_ERROR(
      NeedFile(o.eval_path, "--eval", "an evaluation set for the gate (.npy or IDX)"));
  if (!o.eval_labels_path.empty()) {
    BRIGADE_RETURN_IF_ERROR(NeedFile(o.eval_labels_path, "--eval-labels", "labels"));
  }
  if (!o.register_repository.empty()) {
    BRIGADE_RETURN_IF_ERROR(CheckRegisterTarget(o.register_repository, RegisteredName(o)).status());
  }
  if (o.train_samples < 0 || o.eval_samples < 0) {
    return absl::InvalidArgumentError(
        StrCat(o.train_samples < 0 ? "--train-samples" : "--eval-samples", ": must be >= 0"));
  }
  return absl::OkStatus();
}

}  // namespace

std::string_view RecipeName(RecipeKind kind) {
  return kind == RecipeKind::kPrune ? "prune" : "distill";
}

absl::StatusOr<RecipeJobReport> RunRecipeJob(const RecipeJobOptions& o) {
  BRIGADE_RETURN_IF_ERROR(Validate(o));
  // The model must be one the engine loads before any training is spent on it.
  BRIGADE_RETURN_IF_ERROR(ReadOnnxModel(o.model_path, "").status());
  RecipeJobReport report;
  BRIGADE_ASSIGN_OR_RETURN(report.recipe_path,
                           FindRecipe(StrCat(RecipeName(o.kind), ".py"), o.recipe_dir, o.exe_path));

  const fs::path output(o.output_path);
  const fs::path work =
      DirOf(o.output_path) / StrCat(".", output.filename().string(), ".work.", getpid());
  std::error_code error;
  fs::remove_all(work, error);
  if (!fs::create_directory(work, error)) {
    return absl::InternalError(
        StrCat("-o: cannot create the work folder '", work.string(), "': ", error.message()));
  }
  const RemoveOnExit remove_work(work);
  const fs::path candidate = work / "candidate.onnx";
  fs::path torchscript_temp;
  if (!o.torchscript_path.empty()) {
    torchscript_temp =
        DirOf(o.torchscript_path) /
        StrCat(".", fs::path(o.torchscript_path).filename().string(), ".tmp.", getpid());
  }
  const RemoveOnExit remove_torchscript(torchscript_temp);

  RecipeRun run;
  run.python = o.python;
  run.script = report.recipe_path;
  run.timeout = o.timeout;
  run.relay_stderr = o.relay_progress;
  run.clock = o.clock;
  run.args = {o.model_path};
  run.args.insert(run.args.end(), o.recipe_args.begin(), o.recipe_args.end());
  run.args.insert(run.args.end(), {"--train", o.train_path, "--train-labels", o.train_labels_path,
                                   "--train-samples", StrCat(o.train_samples), "--input-scale",
                                   fmt::format("{}", o.integer_scale), "--threads",
                                   StrCat(o.threads), "--onnx-out", candidate.string()});
  if (!o.eval_labels_path.empty()) {
    run.args.insert(run.args.end(), {"--eval", o.eval_path, "--eval-labels", o.eval_labels_path,
                                     "--eval-samples", StrCat(o.eval_samples)});
  }
  if (!torchscript_temp.empty()) {
    run.args.insert(run.args.end(), {"--torchscript-out", torchscript_temp.string()});
  }
  const int64_t start_ns = o.clock->NowNs();
  BRIGADE_ASSIGN_OR_RETURN(std::string summary, RunRecipe(run));
  report.recipe_seconds = static_cast<double>(o.clock->NowNs() - start_ns) / 1e9;
  while (!summary.empty() && (summary.back() == '\n' || summary.back() == ' ')) {
    summary.pop_back();
  }
  report.recipe_summary = summary.substr(summary.rfind('\n') + 1);
  if (!fs::is_regular_file(candidate, error)) {
    return absl::InternalError(StrCat(fs::path(report.recipe_path).filename().string(),
                                      " exited 0 but wrote no model to '", candidate.string(),
                                      "'"));
  }

  GateOptions gate;
  gate.reference_path = o.model_path;
  gate.candidate_path = candidate.string();
  gate.eval_path = o.eval_path;
  gate.eval_labels_path = o.eval_labels_path;
  gate.eval_samples = o.eval_samples;
  gate.integer_scale = o.integer_scale;
  gate.max_accuracy_drop = o.max_accuracy_drop;
  gate.threads = o.threads;
  gate.time_iterations = o.time_iterations;
  gate.clock = o.clock;
  BRIGADE_ASSIGN_OR_RETURN(report.gate, GateCandidate(gate));
  if (!report.gate.passed && !o.force) return report;

  fs::rename(candidate, output, error);
  if (error) {
    return absl::InternalError(
        StrCat("-o: cannot rename onto '", o.output_path, "': ", error.message()));
  }
  if (!torchscript_temp.empty()) {
    fs::rename(torchscript_temp, o.torchscript_path, error);
    if (error) {
      return absl::InternalError(StrCat("--torchscript: cannot rename onto '", o.torchscript_path,
                                        "': ", error.message()));
    }
  }
  report.written = true;
  if (o.register_repository.empty()) return report;
  const bool slower = !report.gate.timings.empty() && report.gate.timings.front().candidate_us >=
                                                          report.gate.timings.front().reference_us;
  if (slower && !o.force) {
    report.not_registered = "not faster than fp32 at batch 1 (register anyway with --force)";
    return report;
  }
  RegisterOptions r;
  r.repository = o.register_repository;
  r.model_name = RegisteredName(o);
  r.model_file = o.output_path;
  r.torchscript_file = o.torchscript_path;
  r.source_model_path = o.model_path;
  r.fields = Measurements(o, report.gate);
  BRIGADE_ASSIGN_OR_RETURN(report.registration, RegisterVariant(r));
  return report;
}

std::string RecipeJobReport::Text(const RecipeJobOptions& options) const {
  std::string out;
  auto add = [&out]<typename... Args>(fmt::format_string<Args...> format, Args&&... args) {
    fmt::format_to(std::back_inserter(out), format, std::forward<Args>(args)...);
  };
  std::string args;
  for (const std::string& a : options.recipe_args) args += StrCat(" ", a);
  add("model       {}\n", options.model_path);
  add("recipe      {}{} ({}, {:.1f} s)\n", RecipeName(options.kind), args, recipe_path,
      recipe_seconds);
  out += gate.Text(RecipeName(options.kind), options.max_accuracy_drop, options.threads);
  if (!gate.passed && written) add("note        written because of --force\n");
  if (registration.has_value()) {
    add("registered  {} version {}{}\n", registration->model_dir, registration->version,
        registration->new_model ? " (new model)" : "");
  } else if (!not_registered.empty()) {
    add("registered  no: {}\n", not_registered);
  }
  add("output      {}\n",
      !written
          ? std::string("not written")
          : StrCat(options.output_path,
                   options.torchscript_path.empty() ? "" : StrCat(", ", options.torchscript_path)));
  return out;
}

std::string RecipeJobReport::Json() const {
  const bool summary_is_json = !recipe_summary.empty() && recipe_summary.front() == '{';
  const std::string registered =
      registration.has_value()
          ? fmt::format("{{\"model_dir\":\"{}\",\"version\":{},\"new_model\":{}}}",
                        registration->model_dir, registration->version,
                        registration->new_model ? "true" : "false")
          : std::string("null");
  return fmt::format("{{{},\"written\":{},\"registered\":{},\"recipe_seconds\":{},\"recipe\":{}}}",
                     gate.JsonFields(), written ? "true" : "false", registered, recipe_seconds,
                     summary_is_json ? recipe_summary : "null");
}

}  // namespace brigade::optimize
