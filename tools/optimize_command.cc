// `brigade optimize quantize MODEL.onnx -o OUT.onnx`: INT8 quantization of an ONNX model (dynamic
// MatMulInteger or static QDQ calibrated on a data set), checked against the fp32 model before
// it is written. The work is optimize/quantize_job.h's; this verb only maps flags onto its
// options, prints its report and turns the outcome into the exit status: 0 written, 2 refused by
// the accuracy gate (or not evaluated without --force), 1 an error.
//
// `brigade optimize prune|distill MODEL.onnx -o OUT.onnx`: structured channel pruning with
// fine-tuning, or a distilled narrower student, trained by the Python recipes of
// scripts/optimize and gated like quantize (optimize/recipe_job.h); the same exit statuses.
// `brigade optimize evaluate CANDIDATE.onnx --reference FP32.onnx`: that gate and timing alone,
// for a model made elsewhere (optimize/gate.h): 0 passed, 2 failed, 1 an error.

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "core/strings.h"
#include "tools/command.h"
#if BRIGADE_HAVE_ONNX
#include "optimize/gate.h"
#include "optimize/quantize_job.h"
#include "optimize/recipe.h"
#include "optimize/recipe_job.h"
#endif

namespace brigade::tools {
namespace {

// The gate's flags, the same on every verb: how the candidate is judged and timed.
struct GateFlags {
  std::string eval_labels;
  int64_t eval_samples = 0;
  double input_scale = 1.0 / 255.0;
  double max_accuracy_drop = 1.0;
  int time_iterations = 20;
  bool json = false;
};

struct OptimizeFlags {
  GateFlags gate;
  std::string model;
  std::string output;
  std::string mode = "static";
  std::string method = "minmax";
  double percentile = 99.999;
  std::string calibration;
  int64_t calibration_samples = 256;
  std::string eval;
  int64_t eval_random = 0;
  bool per_channel = true;
  bool reduce_range = false;
  std::vector<std::string> exclude_ops;
  std::vector<std::string> exclude_nodes;
  bool force = false;
  bool sensitivity = false;
  int64_t sensitivity_samples = 200;
  bool fallback = false;
  int threads = 1;
  std::string register_repository;
  std::string register_name;
};

int RunQuantize(const OptimizeFlags& flags) {
#if !BRIGADE_HAVE_ONNX
  (void)flags;
  std::fputs("brigade optimize: this brigade was built without the ONNX engine\n", stderr);
  return 1;
#else
  optimize::QuantizeJobOptions o;
  o.model_path = flags.model;
  o.output_path = flags.output;
  o.quantize.mode = flags.mode == "dynamic" ? optimize::QuantMode::kDynamic
                    : flags.mode == "bf16"  ? optimize::QuantMode::kBf16
                                            : optimize::QuantMode::kStatic;
  o.quantize.per_channel = flags.per_channel;
  o.quantize.reduce_range = flags.reduce_range;
  o.quantize.exclude_op_types = flags.exclude_ops;
  o.quantize.exclude_nodes = flags.exclude_nodes;
  o.calibration.method = flags.method == "entropy"      ? optimize::CalibrationMethod::kEntropy
                         : flags.method == "percentile" ? optimize::CalibrationMethod::kPercentile
                                                        : optimize::CalibrationMethod::kMinMax;
  o.calibration.percentile = flags.percentile;
  o.calibration.threads = flags.threads;
  o.calibration_path = flags.calibration;
  o.calibration_samples = flags.calibration_samples;
  o.eval_path = flags.eval;
  o.eval_random = flags.eval_random;
  o.eval_labels_path = flags.gate.eval_labels;
  o.eval_samples = flags.gate.eval_samples;
  o.integer_scale = flags.gate.input_scale;
  o.max_accuracy_drop = flags.gate.max_accuracy_drop;
  o.force = flags.force;
  o.sensitivity = flags.sensitivity;
  o.sensitivity_samples = flags.sensitivity_samples;
  o.fallback = flags.fallback;
  o.threads = flags.threads;
  o.time_iterations = flags.gate.time_iterations;
  o.register_repository = flags.register_repository;
  o.register_name = flags.register_name;
  const absl::StatusOr<optimize::QuantizeReport> report = optimize::RunQuantizeJob(o);
  if (!report.ok()) {
    std::fputs(StrCat("brigade optimize quantize: ", report.status().message(), "\n").c_str(),
               stderr);
    return 1;
  }
  std::fputs(flags.gate.json ? StrCat(report->Json(), "\n").c_str() : report->Text(o).c_str(),
             stdout);
  return report->written ? 0 : 2;
#endif
}

// The flags prune and distill share, and each one's own (passed to the recipe as they are).
struct RecipeFlags {
  GateFlags gate;
  std::string model;
  std::string output;
  std::string torchscript;
  std::string train;
  std::string train_labels;
  int64_t train_samples = 0;
  std::string eval;
  bool force = false;
  int threads = 1;
  std::string python = "/usr/bin/python3";
  std::string recipe_dir;
  double recipe_timeout_secs = 3600;
  bool quiet = false;
  std::string register_repository;
  std::string register_name;
  // prune
  double ratio = 0;
  std::string norm = "l1";
  double max_step = 0.5;
  int channel_multiple = 1;
  int finetune_epochs = 1;
  // distill
  double width = 0.5;
  double temperature = 4.0;
  double alpha = 0.7;
  int epochs = 5;
  double lr = 0;  // 0: the recipe's default for its kind
};

int RunRecipeVerb(const RecipeFlags& flags, bool prune) {
#if !BRIGADE_HAVE_ONNX
  (void)flags;
  (void)prune;
  std::fputs("brigade optimize: this brigade was built without the ONNX engine\n", stderr);
  return 1;
#else
  optimize::RecipeJobOptions o;
  o.kind = prune ? optimize::RecipeKind::kPrune : optimize::RecipeKind::kDistill;
  o.model_path = flags.model;
  o.output_path = flags.output;
  o.torchscript_path = flags.torchscript;
  const double lr = flags.lr > 0 ? flags.lr : (prune ? 1e-3 : 3e-3);
  if (prune) {
    o.recipe_args = {"--ratio",
                     fmt::format("{}", flags.ratio),
                     "--norm",
                     flags.norm,
                     "--max-step",
                     fmt::format("{}", flags.max_step),
                     "--channel-multiple",
                     StrCat(flags.channel_multiple),
                     "--finetune-epochs",
                     StrCat(flags.finetune_epochs),
                     "--lr",
                     fmt::format("{}", lr)};
  } else {
    o.recipe_args = {"--width",       fmt::format("{}", flags.width),
                     "--temperature", fmt::format("{}", flags.temperature),
                     "--alpha",       fmt::format("{}", flags.alpha),
                     "--epochs",      StrCat(flags.epochs),
                     "--lr",          fmt::format("{}", lr)};
  }
  o.train_path = flags.train;
  o.train_labels_path = flags.train_labels;
  o.train_samples = flags.train_samples;
  o.eval_path = flags.eval;
  o.eval_labels_path = flags.gate.eval_labels;
  o.eval_samples = flags.gate.eval_samples;
  o.integer_scale = flags.gate.input_scale;
  o.max_accuracy_drop = flags.gate.max_accuracy_drop;
  o.force = flags.force;
  o.threads = flags.threads;
  o.time_iterations = flags.gate.time_iterations;
  o.python = flags.python;
  o.recipe_dir = flags.recipe_dir;
  o.exe_path = optimize::SelfExecutablePath();
  o.timeout = absl::Seconds(flags.recipe_timeout_secs);
  o.relay_progress = !flags.quiet;
  o.register_repository = flags.register_repository;
  o.register_name = flags.register_name;
  const absl::StatusOr<optimize::RecipeJobReport> report = optimize::RunRecipeJob(o);
  if (!report.ok()) {
    std::fputs(StrCat("brigade optimize ", optimize::RecipeName(o.kind), ": ",
                      report.status().message(), "\n")
                   .c_str(),
               stderr);
    return 1;
  }
  std::fputs(flags.gate.json ? StrCat(report->Json(), "\n").c_str() : report->Text(o).c_str(),
             stdout);
  return report->written ? 0 : 2;
#endif
}

struct EvaluateFlags {
  GateFlags gate;
  std::string candidate;
  std::string reference;
  std::string eval;
  int threads = 1;
};

int RunEvaluate(const EvaluateFlags& flags) {
#if !BRIGADE_HAVE_ONNX
  (void)flags;
  std::fputs("brigade optimize: this brigade was built without the ONNX engine\n", stderr);
  return 1;
#else
  optimize::GateOptions o;
  o.reference_path = flags.reference;
  o.candidate_path = flags.candidate;
  o.eval_path = flags.eval;
  o.eval_labels_path = flags.gate.eval_labels;
  o.eval_samples = flags.gate.eval_samples;
  o.integer_scale = flags.gate.input_scale;
  o.max_accuracy_drop = flags.gate.max_accuracy_drop;
  o.threads = flags.threads;
  o.time_iterations = flags.gate.time_iterations;
  const absl::StatusOr<optimize::GateReport> report = optimize::GateCandidate(o);
  if (!report.ok()) {
    std::fputs(StrCat("brigade optimize evaluate: ", report.status().message(), "\n").c_str(),
               stderr);
    return 1;
  }
  const std::string text =
      flags.gate.json ? StrCat("{", report->JsonFields(), "}\n")
                      : StrCat("reference   ", flags.reference, "\ncandidate   ", flags.candidate,
                               "\n", report->Text("candidate", o.max_accuracy_drop, o.threads));
  std::fputs(text.c_str(), stdout);
  return report->passed ? 0 : 2;
#endif
}

// A check for a number strictly inside (lo, hi], or (lo, hi) when `open_high`.
CLI::Validator Interval(double lo, double hi, bool open_high) {
  return CLI::Validator(
      [lo, hi, open_high](std::string& text) -> std::string {
        double v = 0;
        if (!ParseDouble(text, &v) || !(v > lo) || (open_high ? !(v < hi) : !(v <= hi))) {
          return fmt::format("{} is not in ({}, {}{}", text, lo, hi, open_high ? ")" : "]");
        }
        return std::string();
      },
      fmt::format("in ({}, {}{}", lo, hi, open_high ? ")" : "]"));
}

// The options of GateFlags, with the same words on every verb.
void AddGateFlags(CLI::App* c, GateFlags* gate) {
  c->add_option("--eval-labels", gate->eval_labels,
                "Labels of --eval (.npy or IDX1): the gate compares top-1 accuracy; without "
                "them, top-1 agreement with fp32");
  c->add_option("--eval-samples", gate->eval_samples, "Use at most this many (0: all)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  c->add_option("--input-scale", gate->input_scale,
                "Integer data (uint8 pixels) times this becomes the fp32 input")
      ->capture_default_str();
  c->add_option("--max-accuracy-drop", gate->max_accuracy_drop,
                "The gate: largest accepted drop in points (accuracy or 100 - agreement %)")
      ->capture_default_str();
  c->add_option("--time-iterations", gate->time_iterations,
                "Timed runs of each model at batch 1 and 8 (0: no timing)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  c->add_flag("--json", gate->json, "Print the report as one JSON object");
}

void AddRecipeFlags(CLI::App* c, const std::shared_ptr<RecipeFlags>& flags) {
  c->add_option("model", flags->model, "The fp32 .onnx file")->required();
  c->add_option("-o,--output", flags->output, "Where to write the ONNX result")->required();
  c->add_option("--torchscript", flags->torchscript, "Also write the result as TorchScript here");
  c->add_option("--train", flags->train, "Training samples: .npy or IDX (gzip or not)")->required();
  c->add_option("--train-labels", flags->train_labels, "Their labels: .npy or IDX1")->required();
  c->add_option("--train-samples", flags->train_samples, "Train on the first N (0: all)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  c->add_option("--eval", flags->eval, "Evaluation samples for the gate (.npy or IDX)")->required();
  AddGateFlags(c, &flags->gate);
  c->add_flag("--force", flags->force, "Write the model even when it misses the gate");
  c->add_option("--threads", flags->threads, "Threads for training, evaluation and timing")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  c->add_option("--python", flags->python, "The Python with python3-torch and python3-onnx")
      ->capture_default_str();
  c->add_option("--recipe-dir", flags->recipe_dir,
                "Folder of the recipes (default: scripts/optimize beside the binary)");
  c->add_option("--recipe-timeout-secs", flags->recipe_timeout_secs,
                "Stop the recipe after this long")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  c->add_option("--lr", flags->lr, "Learning rate (default: 1e-3 prune, 3e-3 distill)")
      ->check(CLI::PositiveNumber);
  c->add_option("--register", flags->register_repository,
                "Also place the written model in this model repository (a new model, or a new "
                "version of an ONNX one), its config carrying the measurements");
  c->add_option("--register-name", flags->register_name,
                "The model's name in --register (default: -o's file name without .onnx)");
  c->add_flag("--quiet", flags->quiet, "Do not relay the recipe's progress to stderr");
}

}  // namespace

void RegisterOptimizeCommand(CLI::App& app, int* exit_code) {
  CLI::App* optimize = app.add_subcommand("optimize", "Make a model cheaper to serve");
  optimize->require_subcommand(1);
  auto flags = std::make_shared<OptimizeFlags>();
  CLI::App* q = optimize->add_subcommand(
      "quantize",
      "INT8-quantize an ONNX model (dynamic or static QDQ), or mark it for bf16, checked "
      "against fp32 before writing");
  q->add_option("model", flags->model, "The fp32 .onnx file")->required();
  q->add_option("-o,--output", flags->output, "Where to write the INT8 (or bf16) .onnx file")
      ->required();
  q->add_option("--mode", flags->mode,
                "dynamic: MatMul/Gemm weights int8, activations at run time; static: QDQ "
                "calibrated on --calibration; bf16: the fp32 graph marked for bf16 "
                "multiply-adds (CPUs with AVX-512 BF16 or AMX)")
      ->check(CLI::IsMember({"dynamic", "static", "bf16"}))
      ->capture_default_str();
  q->add_option("--calibration", flags->calibration,
                "Calibration samples: .npy or IDX (gzip or not), first dimension = samples");
  q->add_option("--calibration-samples", flags->calibration_samples,
                "Use at most this many calibration samples")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  q->add_option("--method", flags->method, "Calibration method")
      ->check(CLI::IsMember({"minmax", "percentile", "entropy"}))
      ->capture_default_str();
  q->add_option("--percentile", flags->percentile, "Percentile of |x| kept by --method percentile")
      ->check(CLI::Range(50.0, 100.0))
      ->capture_default_str();
  q->add_flag("--per-channel,!--per-tensor", flags->per_channel,
              "One weight scale per output channel (default) or one per tensor");
  q->add_flag("--reduce-range", flags->reduce_range,
              "7-bit weights, exact on CPUs without VNNI (AVX2's u8*s8 pairs fit int16)");
  q->add_option("--exclude-op", flags->exclude_ops, "Keep every node of this op type in fp32");
  q->add_option("--exclude-node", flags->exclude_nodes, "Keep the node of this name in fp32");
  q->add_option("--eval", flags->eval,
                "Evaluation samples (.npy or IDX); default: the calibration samples");
  q->add_option("--eval-random", flags->eval_random,
                "Instead of --eval: agreement on N random samples of every input (floats in "
                "[-1, 1), ids in [0, 1000), masks all ones), for models with several inputs")
      ->check(CLI::NonNegativeNumber);
  AddGateFlags(q, &flags->gate);
  q->add_flag("--force", flags->force, "Write the model even when it misses the gate");
  q->add_flag("--sensitivity", flags->sensitivity,
              "Report each layer's drop when it alone is quantized");
  q->add_option("--sensitivity-samples", flags->sensitivity_samples,
                "Evaluation rows per layer for --sensitivity")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  q->add_flag("--fallback", flags->fallback,
              "When the gate fails, keep the most sensitive layers in fp32 one by one until it "
              "holds");
  q->add_option("--threads", flags->threads, "Engine threads for calibration, evaluation, timing")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  q->add_option("--register", flags->register_repository,
                "Also place the written model in this model repository (a new model, or a new "
                "version of an ONNX one), its config carrying the measurements");
  q->add_option("--register-name", flags->register_name,
                "The model's name in --register (default: -o's file name without .onnx)");
  q->callback([flags, exit_code] { *exit_code = RunQuantize(*flags); });

  auto recipe = std::make_shared<RecipeFlags>();
  CLI::App* p = optimize->add_subcommand(
      "prune",
      "Cut whole channels (L1/L2 filter norm, stepwise, fine-tuned), checked against fp32");
  AddRecipeFlags(p, recipe);
  p->add_option("--ratio", recipe->ratio, "Fraction of each layer's channels to remove")
      ->required()
      ->check(Interval(0, 1, /*open_high=*/true));
  p->add_option("--norm", recipe->norm, "Channel importance: the filter's L1 or L2 norm")
      ->check(CLI::IsMember({"l1", "l2"}))
      ->capture_default_str();
  p->add_option("--max-step", recipe->max_step,
                "Largest fraction of a layer's remaining channels cut in one step")
      ->check(Interval(0, 0.5, /*open_high=*/false))
      ->capture_default_str();
  p->add_option("--channel-multiple", recipe->channel_multiple,
                "Round each layer's kept channels down to a multiple of this (16: the engine's "
                "AVX-512 blocks, where 24 of 32 channels cost what 32 do)")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  p->add_option("--finetune-epochs", recipe->finetune_epochs, "Fine-tuning epochs after each step")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  p->callback([recipe, exit_code] { *exit_code = RunRecipeVerb(*recipe, /*prune=*/true); });

  CLI::App* d = optimize->add_subcommand(
      "distill", "Train a narrower student on the model's soft labels, checked against fp32");
  AddRecipeFlags(d, recipe);
  d->add_option("--width", recipe->width, "Student width as a fraction of the teacher's")
      ->check(Interval(0, 1, /*open_high=*/false))
      ->capture_default_str();
  d->add_option("--temperature", recipe->temperature, "Softmax temperature T of the soft loss")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  d->add_option("--alpha", recipe->alpha,
                "Weight of the soft loss: alpha*T^2*KL + (1-alpha)*cross-entropy")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  d->add_option("--epochs", recipe->epochs, "Training epochs")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  d->callback([recipe, exit_code] { *exit_code = RunRecipeVerb(*recipe, /*prune=*/false); });

  auto evaluate = std::make_shared<EvaluateFlags>();
  CLI::App* e = optimize->add_subcommand(
      "evaluate", "Gate and time a model made elsewhere against its fp32 model on the engine");
  e->add_option("candidate", evaluate->candidate, "The .onnx file to judge")->required();
  e->add_option("--reference", evaluate->reference, "The fp32 .onnx file it replaces")->required();
  e->add_option("--eval", evaluate->eval, "Evaluation samples (.npy or IDX)")->required();
  AddGateFlags(e, &evaluate->gate);
  e->add_option("--threads", evaluate->threads, "Engine threads")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  e->callback([evaluate, exit_code] { *exit_code = RunEvaluate(*evaluate); });
}

const CommandRegistration kOptimizeRegistration(60, RegisterOptimizeCommand);

}  // namespace brigade::tools
