#include "optimize/quantize_job.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "core/status_macros.h"
#include "core/strings.h"
#include "engine/onnx/kernels/cpu_isa.h"
#include "engine/onnx/kernels/qlinear_dnnl.h"
#include "optimize/dataset.h"
#include "optimize/model_runner.h"

namespace brigade::optimize {
namespace {

absl::StatusOr<::onnx::ModelProto> ReadModel(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(StrCat("cannot read model '", path, "'"));
  std::stringstream buffer;
  buffer << in.rdbuf();
  ::onnx::ModelProto model;
  if (!model.ParseFromString(buffer.str())) {
    return absl::InvalidArgumentError(
        StrCat("'", path, "' is not an ONNX model (protobuf parse failed)"));
  }
  return model;
}

std::string Serialize(const ::onnx::ModelProto& model) {
  std::string bytes;
  model.SerializeToString(&bytes);
  return bytes;
}

// Everything that stays fixed while layers are tried in and out.
struct Context {
  const QuantizeJobOptions& options;
  ::onnx::ModelProto model;
  std::string model_dir;
  RangeMap ranges;
  std::vector<Tensor> eval;  // one [N, ...] tensor per model input; empty: no evaluation
  std::vector<int64_t> labels;
  Tensor reference;  // fp32 outputs on `eval`
};

absl::StatusOr<std::unique_ptr<ModelRunner>> RunnerFor(const Context& c, const QuantizeResult& q) {
  auto runner = ModelRunner::Create(q.model, "the quantized model", c.model_dir, c.options.threads);
  if (!runner.ok()) {
    return absl::InternalError(
        StrCat("quantizing '", c.options.model_path,
               "' made a model the engine rejects: ", runner.status().message()));
  }
  return runner;
}

absl::StatusOr<Comparison> Evaluate(const Context& c, const QuantizeResult& q, int64_t rows) {
  BRIGADE_ASSIGN_OR_RETURN(std::unique_ptr<ModelRunner> runner, RunnerFor(c, q));
  std::vector<Tensor> subset;
  for (const Tensor& input : c.eval) {
    BRIGADE_ASSIGN_OR_RETURN(subset.emplace_back(),
                             input.SliceRows(0, std::min(rows, input.shape()[0])));
  }
  BRIGADE_ASSIGN_OR_RETURN(Tensor out, runner->RunAll(subset, c.options.batch));
  const std::span<const int64_t> labels(c.labels);
  return Compare(
      c.reference, out,
      labels.empty() ? labels : labels.first(std::min(labels.size(), static_cast<size_t>(rows))));
}

absl::StatusOr<Tensor> LoadFitted(const std::string& path, int64_t max_samples, double scale,
                                  const ModelRunner& runner, const char* flag) {
  if (runner.num_inputs() != 1) {
    return absl::InvalidArgumentError(StrCat(
        flag, ": the model has ", runner.num_inputs(),
        " inputs and a data set feeds one; --eval-random N evaluates on random inputs instead"));
  }
  DatasetOptions d;
  d.max_samples = max_samples;
  d.integer_scale = scale;
  auto samples = LoadSamples(path, d);
  if (!samples.ok()) {
    return absl::Status(samples.status().code(), StrCat(flag, ": ", samples.status().message()));
  }
  auto fitted = FitToInput(*samples, runner.sample_shape(), path, runner.input_name());
  if (!fitted.ok()) {
    return absl::InvalidArgumentError(StrCat(flag, ": ", fitted.status().message()));
  }
  if (runner.fixed_batch() > 0 && fitted->shape()[0] < runner.fixed_batch()) {
    return absl::InvalidArgumentError(StrCat(flag, ": '", path, "' has ", fitted->shape()[0],
                                             " samples, fewer than the model's fixed batch ",
                                             runner.fixed_batch()));
  }
  return fitted;
}

std::string_view ModeName(QuantMode mode) {
  switch (mode) {
    case QuantMode::kDynamic:
      return "dynamic";
    case QuantMode::kStatic:
      return "static";
    case QuantMode::kBf16:
      return "bf16";
  }
  return "?";
}

// What the report calls the candidate model.
std::string_view CandidateName(QuantMode mode) {
  return mode == QuantMode::kBf16 ? "bf16" : "int8";
}

std::string Percent(std::optional<double> v) { return v ? fmt::format("{:.2f}%", *v * 100) : "-"; }

std::string RegisterName(const QuantizeJobOptions& o) {
  return o.register_name.empty() ? std::filesystem::path(o.output_path).stem().string()
                                 : o.register_name;
}

// What --register writes into the config: how the model was made and what the gate measured.
std::vector<std::pair<std::string, std::string>> QuantizeMeasurements(const QuantizeJobOptions& o,
                                                                      const QuantizeReport& r) {
  std::vector<std::pair<std::string, std::string>> fields;
  fields.emplace_back("recipe", StrCat("quantize ", ModeName(o.quantize.mode),
                                       o.quantize.reduce_range ? " reduce-range" : ""));
  fields.emplace_back("source_model", o.model_path);
  if (r.comparison.has_value()) {
    const Comparison& c = *r.comparison;
    fields.emplace_back("eval_rows", StrCat(c.rows));
    fields.emplace_back("top1_agreement", fmt::format("{:.4f}", c.top1_agreement));
    fields.emplace_back("drop_points", fmt::format("{:.2f}", c.drop_points()));
    if (c.candidate_top1.has_value()) {
      fields.emplace_back("accuracy_top1", fmt::format("{:.4f}", *c.candidate_top1));
      fields.emplace_back("fp32_accuracy_top1", fmt::format("{:.4f}", *c.reference_top1));
    }
  }
  fields.emplace_back("max_accuracy_drop", fmt::format("{:.2f}", o.max_accuracy_drop));
  fields.emplace_back("gate_passed", r.gate_passed ? "true" : "false");
  if (r.fp32_us.has_value() && r.int8_us.has_value()) {
    fields.emplace_back("latency_us_batch1", fmt::format("{:.1f}", *r.int8_us));
    fields.emplace_back("fp32_latency_us_batch1", fmt::format("{:.1f}", *r.fp32_us));
  }
  fields.emplace_back("threads", StrCat(o.threads));
  return fields;
}

}  // namespace

absl::Status WriteFileAtomically(const std::string& path, const std::string& bytes) {
  const std::filesystem::path target(path);
  const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : ".";
  std::error_code error;
  if (!std::filesystem::is_directory(dir, error)) {
    return absl::NotFoundError(StrCat("-o: directory '", dir.string(), "' does not exist"));
  }
  const std::string temp =
      (dir / StrCat(".", target.filename().string(), ".tmp.", getpid())).string();
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) {
      std::filesystem::remove(temp, error);
      return absl::InternalError(StrCat("-o: cannot write '", temp, "'"));
    }
  }
  std::filesystem::rename(temp, target, error);
  if (error) {
    std::filesystem::remove(temp, error);
    return absl::InternalError(StrCat("-o: cannot rename onto '", path, "': ", error.message()));
  }
  return absl::OkStatus();
}

void RankBySensitivity(std::vector<LayerSensitivity>* layers) {
  std::stable_sort(layers->begin(), layers->end(),
                   [](const LayerSensitivity& a, const LayerSensitivity& b) {
                     if (a.drop_points != b.drop_points) return a.drop_points > b.drop_points;
                     if (a.mean_cosine != b.mean_cosine) return a.mean_cosine < b.mean_cosine;
                     return a.top1_agreement < b.top1_agreement;
                   });
}

absl::StatusOr<QuantizeReport> RunQuantizeJob(const QuantizeJobOptions& options) {
  if (options.output_path.empty()) {
    return absl::InvalidArgumentError("-o: an output path is required");
  }
  const bool is_static = options.quantize.mode == QuantMode::kStatic;
  if (is_static && options.calibration_path.empty()) {
    return absl::InvalidArgumentError(
        "--calibration: static quantization needs a calibration data set (.npy or IDX)");
  }
  const bool bf16 = options.quantize.mode == QuantMode::kBf16;
  if (bf16 && (options.sensitivity || options.fallback)) {
    return absl::InvalidArgumentError(
        "--sensitivity / --fallback: bf16 is the whole model's precision, not a layer's");
  }
  if (options.eval_random > 0 && !options.eval_path.empty()) {
    return absl::InvalidArgumentError("--eval-random: give it or --eval, not both");
  }
  if (!options.eval_labels_path.empty() && options.eval_path.empty()) {
    return absl::InvalidArgumentError("--eval-labels: needs --eval (the samples they label)");
  }
  if (!options.register_repository.empty()) {
    BRIGADE_RETURN_IF_ERROR(
        CheckRegisterTarget(options.register_repository, RegisterName(options)).status());
  }
  BRIGADE_ASSIGN_OR_RETURN(::onnx::ModelProto model, ReadModel(options.model_path));
  const std::filesystem::path parent = std::filesystem::path(options.model_path).parent_path();
  Context c{options, std::move(model), parent.empty() ? "." : parent.string(), {}, {}, {}, {}};
  BRIGADE_ASSIGN_OR_RETURN(
      std::unique_ptr<ModelRunner> fp32,
      ModelRunner::Create(c.model, options.model_path, c.model_dir, options.threads));
  QuantizeReport report;
  report.mode = options.quantize.mode;
  Tensor calibration;
  if (!options.calibration_path.empty()) {
    BRIGADE_ASSIGN_OR_RETURN(calibration,
                             LoadFitted(options.calibration_path, options.calibration_samples,
                                        options.integer_scale, *fp32, "--calibration"));
  }
  if (!options.eval_path.empty()) {
    BRIGADE_ASSIGN_OR_RETURN(c.eval.emplace_back(),
                             LoadFitted(options.eval_path, options.eval_samples,
                                        options.integer_scale, *fp32, "--eval"));
    const int64_t eval_rows = c.eval[0].shape()[0];
    if (!options.eval_labels_path.empty()) {
      auto labels = LoadLabels(options.eval_labels_path, eval_rows);
      if (!labels.ok()) {
        return absl::Status(labels.status().code(),
                            StrCat("--eval-labels: ", labels.status().message()));
      }
      if (static_cast<int64_t>(labels->size()) < eval_rows) {
        return absl::InvalidArgumentError(
            StrCat("--eval-labels: '", options.eval_labels_path, "' has ", labels->size(),
                   " labels for ", eval_rows, " samples in '", options.eval_path, "'"));
      }
      c.labels = *std::move(labels);
    }
  } else if (options.eval_random > 0) {
    auto random = fp32->RandomSamples(options.eval_random, 1);
    if (!random.ok()) {
      return absl::InvalidArgumentError(StrCat("--eval-random: ", random.status().message()));
    }
    c.eval = *std::move(random);
  } else if (!calibration.empty()) {
    c.eval = {calibration};
  }
  report.evaluated = !c.eval.empty();
  if (report.evaluated) {
    BRIGADE_ASSIGN_OR_RETURN(c.reference, fp32->RunAll(c.eval, options.batch));
  }
  if (is_static) {
    const std::vector<std::string> tensors = TensorsToCalibrate(c.model, options.quantize);
    BRIGADE_ASSIGN_OR_RETURN(c.ranges, Calibrate(c.model, options.model_path, c.model_dir, tensors,
                                                 calibration, options.calibration));
  }
  report.ranges = c.ranges;
  QuantizeOptions quantize = options.quantize;
  BRIGADE_ASSIGN_OR_RETURN(report.quantized,
                           QuantizeModel(c.model, quantize, c.ranges, c.model_dir));
  const int64_t all_rows = report.evaluated ? c.eval[0].shape()[0] : 0;
  if (report.evaluated) {
    BRIGADE_ASSIGN_OR_RETURN(report.comparison, Evaluate(c, report.quantized, all_rows));
  } else {
    BRIGADE_RETURN_IF_ERROR(RunnerFor(c, report.quantized).status());
  }
  auto gate = [&] {
    return report.comparison.has_value() &&
           report.comparison->drop_points() <= options.max_accuracy_drop;
  };
  if (report.evaluated && (options.sensitivity || (options.fallback && !gate()))) {
    for (const NodeDecision& d : report.quantized.decisions) {
      if (!d.quantized) continue;
      QuantizeOptions alone = options.quantize;
      alone.only_nodes = {d.node};
      BRIGADE_ASSIGN_OR_RETURN(QuantizeResult one,
                               QuantizeModel(c.model, alone, c.ranges, c.model_dir));
      BRIGADE_ASSIGN_OR_RETURN(Comparison cmp, Evaluate(c, one, options.sensitivity_samples));
      report.sensitivity.push_back(
          {d.node, d.op_type, cmp.drop_points(), cmp.top1_agreement, cmp.mean_cosine});
    }
    RankBySensitivity(&report.sensitivity);
  }
  if (options.fallback) {
    for (const LayerSensitivity& layer : report.sensitivity) {
      if (gate()) break;
      quantize.exclude_nodes.push_back(layer.node);
      report.fallback_fp32.push_back(layer.node);
      BRIGADE_ASSIGN_OR_RETURN(report.quantized,
                               QuantizeModel(c.model, quantize, c.ranges, c.model_dir));
      BRIGADE_ASSIGN_OR_RETURN(report.comparison, Evaluate(c, report.quantized, all_rows));
      report.fallback_steps.push_back({layer.node, *report.comparison});
    }
  }
  report.gate_passed = gate();
  if (options.time_iterations > 0) {
    // One batch of the model's inputs: the first rows of the evaluation data, else of the
    // calibration data, else zeros (a single fp32 input) or random samples.
    std::vector<Tensor> source = report.evaluated ? c.eval : std::vector<Tensor>{calibration};
    if (source[0].empty()) {
      if (fp32->num_inputs() == 1) {
        Shape shape{1};
        for (int64_t d : fp32->sample_shape()) shape.push_back(std::max<int64_t>(d, 1));
        BRIGADE_ASSIGN_OR_RETURN(source[0], Tensor::Zeros(DataType::kFp32, shape));
      } else {
        BRIGADE_ASSIGN_OR_RETURN(source, fp32->RandomSamples(1, 1));
      }
    }
    std::vector<Tensor> input;
    for (const Tensor& s : source) {
      BRIGADE_ASSIGN_OR_RETURN(input.emplace_back(),
                               s.SliceRows(0, fp32->fixed_batch() > 0 ? fp32->fixed_batch() : 1));
    }
    BRIGADE_ASSIGN_OR_RETURN(std::unique_ptr<ModelRunner> int8, RunnerFor(c, report.quantized));
    if (!int8->precision_note().empty()) report.quantized.notes.push_back(int8->precision_note());
    BRIGADE_ASSIGN_OR_RETURN(report.fp32_us,
                             fp32->MedianRunMicros(input, options.time_iterations, options.clock));
    BRIGADE_ASSIGN_OR_RETURN(report.int8_us,
                             int8->MedianRunMicros(input, options.time_iterations, options.clock));
    report.slower = *report.int8_us >= *report.fp32_us;
  }
  const std::string bytes = Serialize(report.quantized.model);
  report.fp32_bytes = static_cast<int64_t>(Serialize(c.model).size());
  report.int8_bytes = static_cast<int64_t>(bytes.size());
  if (report.gate_passed || options.force) {
    BRIGADE_RETURN_IF_ERROR(WriteFileAtomically(options.output_path, bytes));
    report.written = true;
  }
  if (!report.written || options.register_repository.empty()) return report;
  if (report.slower && !options.force) {
    report.not_registered = "not faster than fp32 at batch 1 (register anyway with --force)";
    return report;
  }
  RegisterOptions r;
  r.repository = options.register_repository;
  r.model_name = RegisterName(options);
  r.model_file = options.output_path;
  r.source_model_path = options.model_path;
  r.fields = QuantizeMeasurements(options, report);
  BRIGADE_ASSIGN_OR_RETURN(report.registration, RegisterVariant(r));
  return report;
}

std::string QuantizeReport::Text(const QuantizeJobOptions& options) const {
  std::string out;
  auto add = [&out]<typename... Args>(fmt::format_string<Args...> format, Args&&... args) {
    fmt::format_to(std::back_inserter(out), format, std::forward<Args>(args)...);
  };
  add("model       {}\n", options.model_path);
  const QuantMode mode = options.quantize.mode;
  const std::string_view candidate = CandidateName(mode);
  if (mode == QuantMode::kBf16) {
    add("mode        bf16 (multiply-adds of Conv, MatMul, Gemm; fp32 accumulation)\n");
  } else {
    add("mode        {}{}{}\n",
        mode == QuantMode::kStatic ? "static (QDQ)" : "dynamic (MatMulInteger)",
        options.quantize.per_channel ? ", per-channel weights" : ", per-tensor weights",
        options.quantize.reduce_range ? ", reduce-range (7-bit weights)" : "");
  }
  int quantized = 0;
  for (const NodeDecision& d : this->quantized.decisions) quantized += d.quantized;
  add("layers      {} of {} {}\n", quantized, this->quantized.decisions.size(),
      mode == QuantMode::kBf16 ? "in bf16" : "quantized");
  for (const NodeDecision& d : this->quantized.decisions) {
    add("    {:<5} {:<6} {}{}\n", d.quantized ? candidate : "fp32", d.op_type, d.node,
        d.quantized ? "" : StrCat("  (", d.reason, ")"));
  }
  if (!this->quantized.other_ops.empty()) {
    std::string ops;
    for (const auto& [op, n] : this->quantized.other_ops) {
      ops += StrCat(ops.empty() ? "" : ", ", op, " x", n);
    }
    add("left fp32   {} ({})\n", ops,
        mode == QuantMode::kBf16 ? "no multiply-adds to round" : "no INT8 form here");
  }
  for (const std::string& note : this->quantized.notes) add("note        {}\n", note);
  add("size        {:.1f} KiB -> {:.1f} KiB\n", static_cast<double>(fp32_bytes) / 1024,
      static_cast<double>(int8_bytes) / 1024);
  if (comparison.has_value()) {
    const Comparison& c = *comparison;
    if (c.reference_top1.has_value()) {
      add("accuracy    fp32 {}  {} {}  drop {:.2f} points  ({} labelled rows)\n",
          Percent(c.reference_top1), candidate, Percent(c.candidate_top1), c.drop_points(), c.rows);
    }
    add("agreement   top-1 {:.2f}%  cosine mean {:.5f} min {:.5f}  max |diff| {:.4g}  ({} rows)\n",
        c.top1_agreement * 100, c.mean_cosine, c.min_cosine, c.max_abs_diff, c.rows);
  } else {
    add("accuracy    not evaluated (no --eval or --calibration data)\n");
  }
  if (!sensitivity.empty()) {
    add("sensitivity (each layer quantized alone, {} rows; most sensitive first)\n",
        std::min<int64_t>(options.sensitivity_samples, comparison ? comparison->rows : 0));
    for (const LayerSensitivity& s : sensitivity) {
      add("    {:>7.2f} points  agreement {:>7.2f}%  cosine {:.6f}  {} {}\n", s.drop_points,
          s.top1_agreement * 100, s.mean_cosine, s.op_type, s.node);
    }
  }
  if (!fallback_steps.empty()) {
    add("fallback    each layer back to fp32 in turn, then the whole model against fp32:\n");
    for (const FallbackStep& s : fallback_steps) {
      add("    agreement {:>7.2f}%  cosine {:.6f}  drop {:.2f} points  after {}\n",
          s.after.top1_agreement * 100, s.after.mean_cosine, s.after.drop_points(), s.node);
    }
  }
  if (!fallback_fp32.empty()) {
    std::string layers;
    for (const std::string& l : fallback_fp32) layers += StrCat(layers.empty() ? "" : ", ", l);
    add("fallback    kept in fp32: {}\n", layers);
  }
  if (fp32_us.has_value() && int8_us.has_value()) {
    add("latency     fp32 {:.1f} us  {} {:.1f} us  ({:.2f}x, batch 1, {} thread{}, engine)\n",
        *fp32_us, candidate, *int8_us, *int8_us > 0 ? *fp32_us / *int8_us : 0.0, options.threads,
        options.threads == 1 ? "" : "s");
    if (slower) {
      const bool is_static = options.quantize.mode == QuantMode::kStatic;
      std::string why;
      if (mode == QuantMode::kBf16) {
        why = engine::onnx::CpuMultipliesBf16()
                  ? ": rounding the activations to bf16 costs more than the products save here"
                  : ": this CPU has no native bf16 (AVX-512 BF16 or AMX), so the engine runs "
                    "the model in fp32";
      } else if (!is_static && !engine::onnx::DnnlInt8IsExact() && !options.quantize.reduce_range) {
        why =
            ": this CPU has no VNNI, so the engine runs 8-bit-weight MatMulInteger as exact "
            "integer loops (oneDNN's saturate without it); --reduce-range (7-bit weights) runs "
            "them on oneDNN exactly";
      } else if (!is_static) {
        why = ": quantizing the activations at run time costs more than the layers save here";
      } else if (!engine::onnx::DnnlInt8IsExact() && !options.quantize.reduce_range) {
        why =
            ": this CPU has no VNNI, so the engine runs 8-bit-weight QDQ layers in float "
            "(oneDNN's u8s8 kernels saturate without it); --reduce-range (7-bit weights) runs "
            "them on oneDNN exactly";
      } else {
        why =
            ": the Quantize/Dequantize steps between the INT8 layers cost more than the "
            "layers save at this size";
      }
      add("warning     {} is not faster than fp32 here{}\n",
          mode == QuantMode::kBf16 ? "bf16" : "INT8", why);
    }
  }
  if (!evaluated) {
    add("gate        not evaluated: {}\n",
        written ? "written because of --force" : "refused (pass --eval DATA, or --force)");
  } else {
    add("gate        {} (max drop {:.2f} points){}\n", gate_passed ? "passed" : "FAILED",
        options.max_accuracy_drop, gate_passed || !written ? "" : ", written because of --force");
  }
  add("output      {}\n", written ? options.output_path : "not written");
  if (registration.has_value()) {
    add("registered  {} version {}{}\n", registration->model_dir, registration->version,
        registration->new_model ? " (new model)" : "");
  } else if (!not_registered.empty()) {
    add("registered  no: {}\n", not_registered);
  }
  return out;
}

std::string QuantizeReport::Json() const {
  std::string out = "{";
  auto field = [&out](std::string_view key, const std::string& value) {
    out += StrCat(out.size() > 1 ? "," : "", "\"", key, "\":", value);
  };
  auto number = [](std::optional<double> v) {
    return v ? fmt::format("{}", *v) : std::string("null");
  };
  int n = 0;
  std::string layers = "[";
  for (const NodeDecision& d : quantized.decisions) {
    n += d.quantized;
    layers += fmt::format("{}{{\"node\":\"{}\",\"op\":\"{}\",\"quantized\":{}}}",
                          layers.size() > 1 ? "," : "", d.node, d.op_type,
                          d.quantized ? "true" : "false");
  }
  layers += "]";
  field("mode", fmt::format("\"{}\"", ModeName(mode)));
  field("quantized_layers", fmt::format("{}", n));
  field("layers", layers);
  std::string ranked = "[";
  for (const LayerSensitivity& l : sensitivity) {
    ranked += fmt::format(
        "{}{{\"node\":\"{}\",\"op\":\"{}\",\"drop_points\":{},\"top1_agreement\":{},"
        "\"mean_cosine\":{}}}",
        ranked.size() > 1 ? "," : "", l.node, l.op_type, l.drop_points, l.top1_agreement,
        l.mean_cosine);
  }
  field("sensitivity", ranked + "]");
  std::string steps = "[";
  for (const FallbackStep& f : fallback_steps) {
    steps += fmt::format(
        "{}{{\"node\":\"{}\",\"top1_agreement\":{},\"mean_cosine\":{},\"drop_points\":{}}}",
        steps.size() > 1 ? "," : "", f.node, f.after.top1_agreement, f.after.mean_cosine,
        f.after.drop_points());
  }
  field("fallback", steps + "]");
  if (comparison) {
    field("rows", fmt::format("{}", comparison->rows));
    field("top1_agreement", fmt::format("{}", comparison->top1_agreement));
    field("mean_cosine", fmt::format("{}", comparison->mean_cosine));
    field("max_abs_diff", fmt::format("{}", comparison->max_abs_diff));
    field("fp32_top1", number(comparison->reference_top1));
    field("int8_top1", number(comparison->candidate_top1));
    field("drop_points", fmt::format("{}", comparison->drop_points()));
  }
  field("fp32_us", number(fp32_us));
  field("int8_us", number(int8_us));
  field("fp32_bytes", fmt::format("{}", fp32_bytes));
  field("int8_bytes", fmt::format("{}", int8_bytes));
  field("slower", slower ? "true" : "false");
  field("gate_passed", gate_passed ? "true" : "false");
  field("written", written ? "true" : "false");
  field("registered", registration.has_value()
                          ? fmt::format("{{\"model_dir\":\"{}\",\"version\":{}}}",
                                        registration->model_dir, registration->version)
                          : std::string("null"));
  out += "}";
  return out;
}

}  // namespace brigade::optimize
