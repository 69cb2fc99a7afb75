// `brigade optimize quantize MODEL.onnx -o OUT.onnx`: INT8 quantization of an ONNX model (dynamic
// MatMulInteger or static QDQ calibrated on a data set), checked against the fp32 model before
// it is written. The work is optimize/quantize_job.h's; this verb only maps flags onto its
// options, prints its report and turns the outcome into the exit status: 0 written, 2 refused by
// the accuracy gate (or not evaluated without --force), 1 an error.

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "core/strings.h"
#include "tools/command.h"
#if BRIGADE_HAVE_ONNX
#include "optimize/quantize_job.h"
#endif

namespace brigade::tools {
namespace {

struct OptimizeFlags {
  std::string model;
  std::string output;
  std::string mode = "static";
  std::string method = "minmax";
  double percentile = 99.999;
  std::string calibration;
  int64_t calibration_samples = 256;
  std::string eval;
  std::string eval_labels;
  int64_t eval_samples = 0;
  double input_scale = 1.0 / 255.0;
  bool per_channel = true;
  bool reduce_range = false;
  std::vector<std::string> exclude_ops;
  std::vector<std::string> exclude_nodes;
  double max_accuracy_drop = 1.0;
  bool force = false;
  bool sensitivity = false;
  int64_t sensitivity_samples = 200;
  bool fallback = false;
  int threads = 1;
  int time_iterations = 20;
  bool json = false;
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
  o.quantize.mode =
      flags.mode == "dynamic" ? optimize::QuantMode::kDynamic : optimize::QuantMode::kStatic;
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
  o.eval_labels_path = flags.eval_labels;
  o.eval_samples = flags.eval_samples;
  o.integer_scale = flags.input_scale;
  o.max_accuracy_drop = flags.max_accuracy_drop;
  o.force = flags.force;
  o.sensitivity = flags.sensitivity;
  o.sensitivity_samples = flags.sensitivity_samples;
  o.fallback = flags.fallback;
  o.threads = flags.threads;
  o.time_iterations = flags.time_iterations;
  const absl::StatusOr<optimize::QuantizeReport> report = optimize::RunQuantizeJob(o);
  if (!report.ok()) {
    std::fputs(StrCat("brigade optimize quantize: ", report.status().message(), "\n").c_str(),
               stderr);
    return 1;
  }
  std::fputs(flags.json ? StrCat(report->Json(), "\n").c_str() : report->Text(o).c_str(), stdout);
  return report->written ? 0 : 2;
#endif
}

}  // namespace

void RegisterOptimizeCommand(CLI::App& app, int* exit_code) {
  CLI::App* optimize = app.add_subcommand("optimize", "Make a model cheaper to serve");
  optimize->require_subcommand(1);
  auto flags = std::make_shared<OptimizeFlags>();
  CLI::App* q = optimize->add_subcommand(
      "quantize",
      "INT8-quantize an ONNX model (dynamic or static QDQ), checked against fp32 before writing");
  q->add_option("model", flags->model, "The fp32 .onnx file")->required();
  q->add_option("-o,--output", flags->output, "Where to write the INT8 .onnx file")->required();
  q->add_option("--mode", flags->mode,
                "dynamic: MatMul/Gemm weights int8, activations at run time; static: QDQ "
                "calibrated on --calibration")
      ->check(CLI::IsMember({"dynamic", "static"}))
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
  q->add_option("--eval-labels", flags->eval_labels,
                "Labels of --eval (.npy or IDX1): the gate compares top-1 accuracy; without "
                "them, top-1 agreement with fp32");
  q->add_option("--eval-samples", flags->eval_samples, "Use at most this many (0: all)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  q->add_option("--input-scale", flags->input_scale,
                "Integer data (uint8 pixels) times this becomes the fp32 input")
      ->capture_default_str();
  q->add_option("--max-accuracy-drop", flags->max_accuracy_drop,
                "The gate: largest accepted drop in points (accuracy or 100 - agreement %)")
      ->capture_default_str();
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
  q->add_option("--time-iterations", flags->time_iterations,
                "Timed runs of each model at batch 1 (0: no timing)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  q->add_flag("--json", flags->json, "Print the report as one JSON object");
  q->callback([flags, exit_code] { *exit_code = RunQuantize(*flags); });
}

const CommandRegistration kOptimizeRegistration(60, RegisterOptimizeCommand);

}  // namespace brigade::tools
