#ifndef BRIGADE_ROUTE_ENSEMBLE_PLAN_H_
#define BRIGADE_ROUTE_ENSEMBLE_PLAN_H_

// EnsemblePlan: a Triton ensemble (`platform: "ensemble"`, `ensemble_scheduling { step [...] }`)
// checked and compiled into a graph over named tensors, ready to run many times.
//
// Every tensor the ensemble mentions gets a dense id: the ensemble's inputs, and every value a
// step's output_map writes. A step depends on the tensors its input_map reads and becomes ready
// when all of them exist; steps that do not depend on one another are independent and may run
// at once. Create() refuses, with a message naming the step (by index and model) or the tensor:
//   - a step naming a model the lookup does not know, or an input or output that model lacks,
//     or omitting one of the model's required inputs;
//   - a tensor read that nothing produces, a tensor written twice, a cycle, an ensemble output
//     no step produces;
//   - a datatype or shape that differs between the producer of a tensor and a reader of it
//     (dimensions of -1 match anything), or a step model that batches less than the ensemble;
//   - Brigade's per-step fields out of range (more than 8 retries, a timeout over a day).
//
// Thread safety: immutable after Create(); shared by every run of the ensemble.
// Ownership: a plain value held by the ensemble's model version (std::shared_ptr<const ...>).

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/data_type.h"
#include "core/shape.h"
#include "protocol/model_config.pb.h"

namespace brigade::route {

// A tensor as a model declares it to clients: the full shape, dimension 0 = -1 when it batches.
struct TensorSignature {
  std::string name;
  DataType dtype = DataType::kInvalid;
  Shape shape;
  bool optional = false;
};

// What Create() needs to know of the model a step names.
struct StepModelSignature {
  int max_batch_size = 0;
  std::vector<TensorSignature> inputs;
  std::vector<TensorSignature> outputs;
};

// The signature of `model` at `version` (-1: its highest ready version), or the reason there is
// none (NOT_FOUND, UNAVAILABLE).
using SignatureLookup =
    absl::FunctionRef<absl::StatusOr<StepModelSignature>(std::string_view model, int64_t version)>;

struct PlanStep {
  // "step 1 (model 'preprocess')": how messages name it.
  std::string label;
  std::string model_name;
  int64_t model_version = -1;
  // The step model's input name and the ensemble tensor id it reads.
  std::vector<std::pair<std::string, int>> inputs;
  // The step model's output name and the ensemble tensor id it writes.
  std::vector<std::pair<std::string, int>> outputs;
  // Distinct tensors read that other steps write: the step becomes ready when this many of them
  // exist (what it reads of the request is there from the start).
  int dependency_count = 0;
  absl::Duration timeout = absl::InfiniteDuration();
  int retries = 0;
  std::string fallback_model_name;
  int64_t fallback_model_version = -1;
};

class EnsemblePlan {
 public:
  // `config` is the ensemble's validated config (protocol::ValidateModelConfig); `lookup` finds
  // the models its steps name. INVALID_ARGUMENT naming the step or tensor at fault.
  static absl::StatusOr<std::shared_ptr<const EnsemblePlan>> Create(
      const config::ModelConfig& config, SignatureLookup lookup);

  const std::string& name() const { return name_; }
  const std::vector<PlanStep>& steps() const { return steps_; }
  int tensor_count() const { return static_cast<int>(tensor_names_.size()); }
  const std::string& tensor_name(int id) const { return tensor_names_[id]; }
  // Ensemble input names with their tensor ids, in config order.
  const std::vector<std::pair<std::string, int>>& inputs() const { return inputs_; }
  // Ensemble output names with their tensor ids, in config order.
  const std::vector<std::pair<std::string, int>>& outputs() const { return outputs_; }
  // The steps that read tensor `id`, each once.
  const std::vector<int>& consumers(int id) const { return consumers_[id]; }
  // Steps that read only ensemble inputs (ready as soon as a request arrives).
  const std::vector<int>& initial_steps() const { return initial_steps_; }
  // The config's max_inflight_requests (0 = unbounded) and the bound of each step's wait queue.
  int max_inflight_per_step() const { return max_inflight_per_step_; }
  int step_queue_size() const { return step_queue_size_; }

  EnsemblePlan() = default;

 private:
  std::string name_;
  std::vector<PlanStep> steps_;
  std::vector<std::string> tensor_names_;
  std::vector<std::pair<std::string, int>> inputs_;
  std::vector<std::pair<std::string, int>> outputs_;
  std::vector<std::vector<int>> consumers_;
  std::vector<int> initial_steps_;
  int max_inflight_per_step_ = 0;
  int step_queue_size_ = 1024;
};

}  // namespace brigade::route

#endif  // BRIGADE_ROUTE_ENSEMBLE_PLAN_H_
