#ifndef BRIGADE_OPTIMIZE_MODEL_RUNNER_H_
#define BRIGADE_OPTIMIZE_MODEL_RUNNER_H_

// ModelRunner: runs an ONNX ModelProto on Brigade's engine (loader, graph passes, planner,
// kernels: what `brigade serve` runs) over a data set, batch by batch. Calibration runs the fp32
// model with the tensors to calibrate added as outputs; the accuracy gate runs the fp32 and the
// quantized model on the evaluation set and times both.
//
// A model whose metadata asks for bf16 (engine/onnx/exec/compiled_model.h) runs with bf16
// multiply-adds, as `brigade serve` runs it.
//
// A data set feeds a model with one input; a model with several (a text encoder's ids and
// mask) runs on RandomSamples(), for agreement between two versions of it. A fixed first
// dimension of the (first) input is the batch size used, a variable one takes the requested
// batch.
//
// Thread safety: one thread at a time (it owns one engine Session).
// Errors: INVALID_ARGUMENT naming `label` (the model's file) when the engine cannot load or run
// it; the data's shape errors name the input.

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/clock.h"
#include "core/tensor.h"
#include "engine/onnx/exec/session.h"
#include "onnx/onnx_pb.h"

namespace brigade::optimize {

class ModelRunner {
 public:
  // `label` names the model in errors; `model_dir` is where its external data may live.
  // `run_checker` false skips ONNX's checker (for calibration's copy, whose added outputs have
  // no static shape, which the checker insists on).
  static absl::StatusOr<std::unique_ptr<ModelRunner>> Create(const ::onnx::ModelProto& model,
                                                             const std::string& label,
                                                             const std::string& model_dir,
                                                             int threads, bool run_checker = true);

  // The first input's name and the dimensions of one sample of it (its shape after the batch
  // dimension; -1 unknown).
  const std::string& input_name() const { return inputs_[0].name; }
  const std::vector<int64_t>& sample_shape() const { return inputs_[0].sample_shape; }
  size_t num_inputs() const { return inputs_.size(); }
  // The input's fixed batch dimension, or 0 when it is variable.
  int64_t fixed_batch() const { return fixed_batch_; }
  const std::vector<std::string>& output_names() const { return output_names_; }
  // Why the engine runs the model in another precision than its metadata asks for (a bf16 model
  // on a CPU without native bf16); empty when it does not.
  const std::string& precision_note() const { return precision_note_; }

  // `rows` samples for every input, drawn from `seed` as onnx_run draws them: floats uniform in
  // [-1, 1), integers in [0, 1000) (token ids of any vocabulary of at least that size), and all
  // ones for an integer input whose name contains "mask". INVALID_ARGUMENT naming the input when
  // a dimension after the batch is not fixed, or the type is neither.
  absl::StatusOr<std::vector<Tensor>> RandomSamples(int64_t rows, uint32_t seed) const;

  // Runs `samples` (one [N, ...] tensor per input, in input order) in batches of `batch` rows
  // (the fixed batch when there is one; a last partial batch of a fixed-batch model is dropped),
  // calling `consume` with each batch's outputs and its first row.
  absl::Status RunBatches(
      std::span<const Tensor> samples, int64_t batch,
      const std::function<absl::Status(std::span<const Tensor>, int64_t)>& consume);
  absl::Status RunBatches(
      const Tensor& samples, int64_t batch,
      const std::function<absl::Status(std::span<const Tensor>, int64_t)>& consume) {
    return RunBatches(std::span<const Tensor>(&samples, 1), batch, consume);
  }

  // The first output over all rows, [N, ...] (fp32), N rounded down to whole fixed batches.
  absl::StatusOr<Tensor> RunAll(std::span<const Tensor> samples, int64_t batch);
  absl::StatusOr<Tensor> RunAll(const Tensor& samples, int64_t batch) {
    return RunAll(std::span<const Tensor>(&samples, 1), batch);
  }

  // Median time of one run on `inputs` (one tensor per input) over `iterations` runs after two
  // warm-up runs, read from `clock` (borrowed for the call).
  absl::StatusOr<double> MedianRunMicros(std::span<const Tensor> inputs, int iterations,
                                         const Clock* clock);
  absl::StatusOr<double> MedianRunMicros(const Tensor& input, int iterations, const Clock* clock) {
    return MedianRunMicros(std::span<const Tensor>(&input, 1), iterations, clock);
  }

 private:
  ModelRunner() = default;

  struct Input {
    std::string name;
    DataType dtype = DataType::kInvalid;
    std::vector<int64_t> sample_shape;
  };

  std::string label_;
  std::vector<Input> inputs_;  // at least one
  int64_t fixed_batch_ = 0;
  std::vector<std::string> output_names_;
  std::string precision_note_;
  std::unique_ptr<engine::onnx::Session> session_;
};

}  // namespace brigade::optimize

#endif  // BRIGADE_OPTIMIZE_MODEL_RUNNER_H_
