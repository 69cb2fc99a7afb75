#include "optimize/model_runner.h"

#include <algorithm>
#include <cstring>

#include "core/status_macros.h"
#include "core/strings.h"
#include "engine/onnx/exec/compiled_model.h"
#include "engine/onnx/loader/model_loader.h"
#include "engine/onnx/passes/optimizer.h"

namespace brigade::optimize {

absl::StatusOr<std::unique_ptr<ModelRunner>> ModelRunner::Create(const ::onnx::ModelProto& model,
                                                                 const std::string& label,
                                                                 const std::string& model_dir,
                                                                 int threads, bool run_checker) {
  using engine::onnx::CompiledModel;
  using engine::onnx::Session;
  std::string bytes;
  if (!model.SerializeToString(&bytes)) {
    return absl::InvalidArgumentError(StrCat("'", label, "': cannot serialize the model"));
  }
  engine::onnx::LoadOptions load;
  load.run_checker = run_checker;
  auto loaded = engine::onnx::LoadOnnxBytes(bytes, model_dir, load);
  if (!loaded.ok()) {
    return absl::InvalidArgumentError(
        StrCat("'", label, "': the engine cannot load it: ", loaded.status().message()));
  }
  engine::onnx::Graph& graph = loaded->graph;
  if (graph.inputs().size() != 1) {
    return absl::InvalidArgumentError(StrCat("'", label, "' has ", graph.inputs().size(),
                                             " inputs; quantization data feeds models with one"));
  }
  auto runner = std::unique_ptr<ModelRunner>(new ModelRunner());
  runner->label_ = label;
  const engine::onnx::Value& input = graph.value(graph.inputs()[0]);
  runner->input_name_ = input.name;
  if (input.dtype != DataType::kFp32 || !input.shape.has_value() || input.shape->empty()) {
    return absl::InvalidArgumentError(StrCat("'", label, "': input '", input.name,
                                             "' must be fp32 with a known rank (batch first)"));
  }
  runner->fixed_batch_ = (*input.shape)[0] > 0 ? (*input.shape)[0] : 0;
  runner->sample_shape_.assign(input.shape->begin() + 1, input.shape->end());
  for (engine::onnx::ValueId id : graph.outputs()) {
    runner->output_names_.push_back(graph.value(id).name);
  }
  auto optimized = engine::onnx::OptimizeGraph(&graph);
  if (!optimized.ok()) {
    return absl::InvalidArgumentError(
        StrCat("'", label, "': the engine's graph passes failed: ", optimized.status().message()));
  }
  CompiledModel::Options compile;
  if (auto it = loaded->metadata.find(std::string(engine::onnx::kPrecisionMetadataKey));
      it != loaded->metadata.end()) {
    const auto precision = engine::onnx::ParsePrecision(it->second);
    if (!precision.has_value()) {
      return absl::InvalidArgumentError(StrCat("'", label, "': metadata '", it->first, "' is '",
                                               it->second, "', not fp32 or bf16"));
    }
    compile.precision = *precision;
  }
  auto compiled = CompiledModel::Compile(label, std::move(graph), compile);
  if (!compiled.ok()) {
    return absl::InvalidArgumentError(
        StrCat("'", label, "': the engine cannot compile it: ", compiled.status().message()));
  }
  runner->precision_note_ = (*compiled)->precision_note();
  Session::Options options;
  options.threads = std::max(1, threads);
  BRIGADE_ASSIGN_OR_RETURN(runner->session_, Session::Create(*compiled, options));
  return runner;
}

absl::Status ModelRunner::RunBatches(
    const Tensor& samples, int64_t batch,
    const std::function<absl::Status(std::span<const Tensor>, int64_t)>& consume) {
  const int64_t n = samples.shape()[0];
  const int64_t step = fixed_batch_ > 0 ? fixed_batch_ : std::max<int64_t>(1, batch);
  std::vector<Tensor> outputs;
  for (int64_t row = 0; row < n; row += step) {
    const int64_t count = std::min(step, n - row);
    if (fixed_batch_ > 0 && count < fixed_batch_) break;
    BRIGADE_ASSIGN_OR_RETURN(Tensor input, samples.SliceRows(row, count));
    outputs.clear();
    const Tensor inputs[] = {std::move(input)};
    const absl::Status run = session_->Run(inputs, &outputs);
    if (!run.ok()) {
      return absl::InvalidArgumentError(StrCat("'", label_, "': the engine failed on rows ", row,
                                               "..", row + count - 1, ": ", run.message()));
    }
    BRIGADE_RETURN_IF_ERROR(consume(outputs, row));
  }
  return absl::OkStatus();
}

absl::StatusOr<Tensor> ModelRunner::RunAll(const Tensor& samples, int64_t batch) {
  std::vector<float> values;
  Shape shape;
  BRIGADE_RETURN_IF_ERROR(
      RunBatches(samples, batch, [&](std::span<const Tensor> outputs, int64_t) -> absl::Status {
        const Tensor& out = outputs[0];
        if (out.dtype() != DataType::kFp32 || out.shape().empty()) {
          return absl::InvalidArgumentError(StrCat("'", label_, "': output '", output_names_[0],
                                                   "' is not an fp32 tensor with a batch"));
        }
        if (shape.empty()) {
          shape = out.shape();
          shape[0] = 0;
        }
        shape[0] += out.shape()[0];
        values.insert(values.end(), out.values<float>().begin(), out.values<float>().end());
        return absl::OkStatus();
      }));
  return Tensor::FromValues<float>(shape, std::span<const float>(values));
}

absl::StatusOr<double> ModelRunner::MedianRunMicros(const Tensor& input, int iterations,
                                                    const Clock* clock) {
  std::vector<Tensor> outputs;
  const Tensor inputs[] = {input};
  std::vector<double> times;
  for (int i = 0; i < iterations + 2; ++i) {
    const int64_t start_ns = clock->NowNs();
    BRIGADE_RETURN_IF_ERROR(session_->Run(inputs, &outputs));
    if (i >= 2) times.push_back(static_cast<double>(clock->NowNs() - start_ns) / 1e3);
  }
  if (times.empty()) return 0.0;
  std::nth_element(times.begin(), times.begin() + static_cast<ptrdiff_t>(times.size() / 2),
                   times.end());
  return times[times.size() / 2];
}

}  // namespace brigade::optimize
