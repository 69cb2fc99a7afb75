#include "optimize/model_runner.h"

#include <algorithm>
#include <cstring>
#include <random>

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
  if (graph.inputs().empty()) {
    return absl::InvalidArgumentError(StrCat("'", label, "' has no inputs"));
  }
  auto runner = std::unique_ptr<ModelRunner>(new ModelRunner());
  runner->label_ = label;
  for (engine::onnx::ValueId id : graph.inputs()) {
    const engine::onnx::Value& input = graph.value(id);
    if (!input.shape.has_value() || input.shape->empty()) {
      return absl::InvalidArgumentError(
          StrCat("'", label, "': input '", input.name, "' must have a known rank (batch first)"));
    }
    runner->inputs_.push_back({input.name, input.dtype,
                               std::vector<int64_t>(input.shape->begin() + 1, input.shape->end())});
  }
  const engine::onnx::Value& first = graph.value(graph.inputs()[0]);
  if (graph.inputs().size() == 1 && first.dtype != DataType::kFp32) {
    return absl::InvalidArgumentError(
        StrCat("'", label, "': input '", first.name, "' must be fp32 (a data set feeds it)"));
  }
  runner->fixed_batch_ = (*first.shape)[0] > 0 ? (*first.shape)[0] : 0;
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

absl::StatusOr<std::vector<Tensor>> ModelRunner::RandomSamples(int64_t rows, uint32_t seed) const {
  std::mt19937 rng(seed);
  std::vector<Tensor> samples;
  for (const Input& input : inputs_) {
    Shape shape{rows};
    for (int64_t d : input.sample_shape) {
      if (d <= 0) {
        return absl::InvalidArgumentError(
            StrCat("'", label_, "': input '", input.name,
                   "' has a variable dimension after the batch; random samples need fixed ones"));
      }
      shape.push_back(d);
    }
    const bool mask = input.name.find("mask") != std::string::npos;
    switch (input.dtype) {
      case DataType::kFp32: {
        BRIGADE_ASSIGN_OR_RETURN(Tensor t, Tensor::Zeros(DataType::kFp32, shape));
        std::uniform_real_distribution<float> value(-1.0f, 1.0f);
        for (float& v : t.mutable_values<float>()) v = value(rng);
        samples.push_back(std::move(t));
        break;
      }
      case DataType::kInt64:
      case DataType::kInt32: {
        BRIGADE_ASSIGN_OR_RETURN(Tensor t, Tensor::Zeros(input.dtype, shape));
        std::uniform_int_distribution<int32_t> id(0, 999);
        auto fill = [&]<typename T>(std::span<T> values) {
          for (T& v : values) v = mask ? T{1} : static_cast<T>(id(rng));
        };
        if (input.dtype == DataType::kInt64) {
          fill(t.mutable_values<int64_t>());
        } else {
          fill(t.mutable_values<int32_t>());
        }
        samples.push_back(std::move(t));
        break;
      }
      default:
        return absl::InvalidArgumentError(StrCat("'", label_, "': input '", input.name, "' is ",
                                                 DataTypeName(input.dtype),
                                                 "; random samples are fp32, int32 or int64"));
    }
  }
  return samples;
}

absl::Status ModelRunner::RunBatches(
    std::span<const Tensor> samples, int64_t batch,
    const std::function<absl::Status(std::span<const Tensor>, int64_t)>& consume) {
  if (samples.size() != inputs_.size()) {
    return absl::InvalidArgumentError(
        StrCat("'", label_, "' has ", inputs_.size(), " inputs; the data gives ", samples.size()));
  }
  const int64_t n = samples[0].shape()[0];
  for (const Tensor& s : samples) {
    if (s.shape().empty() || s.shape()[0] != n) {
      return absl::InvalidArgumentError(
          StrCat("'", label_, "': every input's samples need the same number of rows"));
    }
  }
  const int64_t step = fixed_batch_ > 0 ? fixed_batch_ : std::max<int64_t>(1, batch);
  std::vector<Tensor> outputs, inputs(samples.size());
  for (int64_t row = 0; row < n; row += step) {
    const int64_t count = std::min(step, n - row);
    if (fixed_batch_ > 0 && count < fixed_batch_) break;
    for (size_t i = 0; i < samples.size(); ++i) {
      BRIGADE_ASSIGN_OR_RETURN(inputs[i], samples[i].SliceRows(row, count));
    }
    outputs.clear();
    const absl::Status run = session_->Run(inputs, &outputs);
    if (!run.ok()) {
      return absl::InvalidArgumentError(StrCat("'", label_, "': the engine failed on rows ", row,
                                               "..", row + count - 1, ": ", run.message()));
    }
    BRIGADE_RETURN_IF_ERROR(consume(outputs, row));
  }
  return absl::OkStatus();
}

absl::StatusOr<Tensor> ModelRunner::RunAll(std::span<const Tensor> samples, int64_t batch) {
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

absl::StatusOr<double> ModelRunner::MedianRunMicros(std::span<const Tensor> inputs, int iterations,
                                                    const Clock* clock) {
  std::vector<Tensor> outputs;
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
