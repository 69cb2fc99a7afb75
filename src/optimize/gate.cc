#include "optimize/gate.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "core/status_macros.h"
#include "core/strings.h"
#include "optimize/dataset.h"
#include "optimize/model_runner.h"

namespace brigade::optimize {
namespace {

std::string DirectoryOf(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? "." : parent.string();
}

int64_t ParameterCount(const ::onnx::ModelProto& model) {
  int64_t total = 0;
  for (const ::onnx::TensorProto& t : model.graph().initializer()) {
    int64_t n = 1;
    for (int64_t d : t.dims()) n *= d;
    total += n;
  }
  return total;
}

absl::StatusOr<Tensor> EvalSamples(const GateOptions& o, const ModelRunner& runner) {
  if (o.eval_path.empty()) {
    return absl::InvalidArgumentError(
        "--eval: the gate needs evaluation samples (.npy or IDX), e.g. the test images");
  }
  DatasetOptions d;
  d.max_samples = o.eval_samples;
  d.integer_scale = o.integer_scale;
  auto samples = LoadSamples(o.eval_path, d);
  if (!samples.ok()) {
    return absl::Status(samples.status().code(), StrCat("--eval: ", samples.status().message()));
  }
  auto fitted = FitToInput(*samples, runner.sample_shape(), o.eval_path, runner.input_name());
  if (!fitted.ok()) {
    return absl::InvalidArgumentError(StrCat("--eval: ", fitted.status().message()));
  }
  return fitted;
}

}  // namespace

absl::StatusOr<::onnx::ModelProto> ReadOnnxModel(const std::string& path, std::string_view flag) {
  const std::string prefix = flag.empty() ? std::string() : StrCat(flag, ": ");
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(StrCat(prefix, "cannot read model '", path, "'"));
  std::stringstream buffer;
  buffer << in.rdbuf();
  ::onnx::ModelProto model;
  if (!model.ParseFromString(buffer.str())) {
    return absl::InvalidArgumentError(
        StrCat(prefix, "'", path, "' is not an ONNX model (protobuf parse failed)"));
  }
  return model;
}

std::vector<WeightLayer> WeightLayers(const ::onnx::ModelProto& model) {
  std::vector<const ::onnx::TensorProto*> by_order;
  auto find = [&model](const std::string& name) -> const ::onnx::TensorProto* {
    for (const ::onnx::TensorProto& t : model.graph().initializer()) {
      if (t.name() == name) return &t;
    }
    return nullptr;
  };
  std::vector<WeightLayer> layers;
  for (const ::onnx::NodeProto& node : model.graph().node()) {
    const std::string& op = node.op_type();
    if ((op != "Conv" && op != "Gemm" && op != "MatMul") || node.input_size() < 2) continue;
    const ::onnx::TensorProto* weight = find(node.input(1));
    if (weight == nullptr || weight->dims_size() < 2) continue;
    bool trans_b = false;
    for (const ::onnx::AttributeProto& a : node.attribute()) {
      if (a.name() == "transB") trans_b = a.i() != 0;
    }
    // Conv weights are [out, in, ...]; Gemm's B is [in, out] unless transB; MatMul's is [in, out].
    const int64_t width = op == "Conv" || trans_b ? weight->dims(0) : weight->dims(1);
    layers.push_back({node.name(), op, width});
  }
  return layers;
}

absl::StatusOr<GateReport> GateCandidate(const GateOptions& o) {
  if (!o.eval_labels_path.empty() && o.eval_path.empty()) {
    return absl::InvalidArgumentError("--eval-labels: needs --eval (the samples they label)");
  }
  BRIGADE_ASSIGN_OR_RETURN(::onnx::ModelProto reference, ReadOnnxModel(o.reference_path, ""));
  BRIGADE_ASSIGN_OR_RETURN(::onnx::ModelProto candidate, ReadOnnxModel(o.candidate_path, ""));
  BRIGADE_ASSIGN_OR_RETURN(
      std::unique_ptr<ModelRunner> reference_runner,
      ModelRunner::Create(reference, o.reference_path, DirectoryOf(o.reference_path), o.threads));
  BRIGADE_ASSIGN_OR_RETURN(
      std::unique_ptr<ModelRunner> candidate_runner,
      ModelRunner::Create(candidate, o.candidate_path, DirectoryOf(o.candidate_path), o.threads));
  if (candidate_runner->sample_shape() != reference_runner->sample_shape()) {
    return absl::InvalidArgumentError(
        StrCat("'", o.candidate_path, "' takes samples of another shape than '", o.reference_path,
               "' (input '", candidate_runner->input_name(), "' vs '",
               reference_runner->input_name(), "')"));
  }
  BRIGADE_ASSIGN_OR_RETURN(Tensor eval, EvalSamples(o, *reference_runner));
  std::vector<int64_t> labels;
  if (!o.eval_labels_path.empty()) {
    auto loaded = LoadLabels(o.eval_labels_path, eval.shape()[0]);
    if (!loaded.ok()) {
      return absl::Status(loaded.status().code(),
                          StrCat("--eval-labels: ", loaded.status().message()));
    }
    if (static_cast<int64_t>(loaded->size()) < eval.shape()[0]) {
      return absl::InvalidArgumentError(StrCat("--eval-labels: '", o.eval_labels_path, "' has ",
                                               loaded->size(), " labels for ", eval.shape()[0],
                                               " samples in '", o.eval_path, "'"));
    }
    labels = *std::move(loaded);
  }
  BRIGADE_ASSIGN_OR_RETURN(Tensor reference_out, reference_runner->RunAll(eval, o.eval_batch));
  BRIGADE_ASSIGN_OR_RETURN(Tensor candidate_out, candidate_runner->RunAll(eval, o.eval_batch));
  const auto row_width = [](const Tensor& t) {
    return t.shape().empty() || t.shape()[0] == 0 ? 0 : t.num_elements() / t.shape()[0];
  };
  if (row_width(reference_out) != row_width(candidate_out)) {
    return absl::InvalidArgumentError(StrCat("'", o.candidate_path, "' gives ",
                                             row_width(candidate_out), " outputs per row, '",
                                             o.reference_path, "' ", row_width(reference_out)));
  }
  GateReport report;
  report.comparison = Compare(reference_out, candidate_out, labels);
  report.passed =
      report.comparison.rows > 0 && report.comparison.drop_points() <= o.max_accuracy_drop;

  const std::vector<WeightLayer> before = WeightLayers(reference);
  const std::vector<WeightLayer> after = WeightLayers(candidate);
  for (size_t i = 0; i < std::max(before.size(), after.size()); ++i) {
    LayerWidth w;
    if (i < before.size()) {
      w.op_type = before[i].op_type;
      w.reference_node = before[i].node;
      w.reference = before[i].width;
    }
    if (i < after.size()) {
      if (w.op_type.empty()) w.op_type = after[i].op_type;
      w.candidate = after[i].width;
    }
    report.widths.push_back(std::move(w));
  }
  report.reference_parameters = ParameterCount(reference);
  report.candidate_parameters = ParameterCount(candidate);
  report.reference_bytes = static_cast<int64_t>(reference.ByteSizeLong());
  report.candidate_bytes = static_cast<int64_t>(candidate.ByteSizeLong());

  if (o.time_iterations > 0) {
    for (int64_t batch : o.time_batches) {
      // A model with a fixed batch dimension runs at that batch only.
      if (reference_runner->fixed_batch() > 0 && batch != reference_runner->fixed_batch()) continue;
      if (batch > eval.shape()[0]) continue;  // not enough samples to fill it
      BRIGADE_ASSIGN_OR_RETURN(Tensor input, eval.SliceRows(0, batch));
      BatchTiming t{batch, 0, 0};
      BRIGADE_ASSIGN_OR_RETURN(
          t.reference_us, reference_runner->MedianRunMicros(input, o.time_iterations, o.clock));
      BRIGADE_ASSIGN_OR_RETURN(
          t.candidate_us, candidate_runner->MedianRunMicros(input, o.time_iterations, o.clock));
      report.timings.push_back(t);
    }
  }
  return report;
}

std::string GateReport::Text(std::string_view label, double max_accuracy_drop, int threads) const {
  std::string out;
  auto add = [&out]<typename... Args>(fmt::format_string<Args...> format, Args&&... args) {
    fmt::format_to(std::back_inserter(out), format, std::forward<Args>(args)...);
  };
  auto percent = [](double v) { return fmt::format("{:.2f}%", v * 100); };
  add("layers      (output channels / features, fp32 -> {})\n", label);
  for (const LayerWidth& w : widths) {
    add("    {:<5} {:>5} -> {:<5} {}\n", w.op_type, w.reference, w.candidate, w.reference_node);
  }
  add("parameters  {} -> {}  ({:.1f} KiB -> {:.1f} KiB)\n", reference_parameters,
      candidate_parameters, static_cast<double>(reference_bytes) / 1024,
      static_cast<double>(candidate_bytes) / 1024);
  const Comparison& c = comparison;
  if (c.reference_top1.has_value() && c.candidate_top1.has_value()) {
    add("accuracy    fp32 {}  {} {}  drop {:.2f} points  ({} labelled rows)\n",
        percent(*c.reference_top1), label, percent(*c.candidate_top1), c.drop_points(), c.rows);
  }
  add("agreement   top-1 {:.2f}%  cosine mean {:.5f}  ({} rows)\n", c.top1_agreement * 100,
      c.mean_cosine, c.rows);
  for (const BatchTiming& t : timings) {
    add("latency     batch {}: fp32 {:.1f} us  {} {:.1f} us  ({:.2f}x, {} thread{}, engine)\n",
        t.batch, t.reference_us, label, t.candidate_us,
        t.candidate_us > 0 ? t.reference_us / t.candidate_us : 0.0, threads,
        threads == 1 ? "" : "s");
  }
  add("gate        {} (max drop {:.2f} points)\n", passed ? "passed" : "FAILED", max_accuracy_drop);
  return out;
}

std::string GateReport::JsonFields() const {
  const Comparison& c = comparison;
  auto number = [](std::optional<double> v) {
    return v ? fmt::format("{}", *v) : std::string("null");
  };
  std::string layers = "[";
  for (const LayerWidth& w : widths) {
    layers += fmt::format("{}{{\"op\":\"{}\",\"node\":\"{}\",\"fp32\":{},\"candidate\":{}}}",
                          layers.size() > 1 ? "," : "", w.op_type, w.reference_node, w.reference,
                          w.candidate);
  }
  layers += "]";
  std::string times = "[";
  for (const BatchTiming& t : timings) {
    times += fmt::format("{}{{\"batch\":{},\"fp32_us\":{},\"candidate_us\":{}}}",
                         times.size() > 1 ? "," : "", t.batch, t.reference_us, t.candidate_us);
  }
  times += "]";
  return fmt::format(
      "\"widths\":{},\"fp32_parameters\":{},\"candidate_parameters\":{},\"fp32_bytes\":{},"
      "\"candidate_bytes\":{},\"rows\":{},\"fp32_top1\":{},\"candidate_top1\":{},"
      "\"top1_agreement\":{},\"drop_points\":{},\"timings\":{},\"gate_passed\":{}",
      layers, reference_parameters, candidate_parameters, reference_bytes, candidate_bytes, c.rows,
      number(c.reference_top1), number(c.candidate_top1), c.top1_agreement, c.drop_points(), times,
      passed ? "true" : "false");
}

}  // namespace brigade::optimize
