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
//   - Brigade's per-step fields out of range (more than 8 retries, a timeout over a day);
//   - a switch reading an unknown parameter source or tensor, a branch listing a step no step
//     is named, a step two branches list, a default_branch no branch is called, a switch
//     deciding its own branch (a cycle);
//   - a step other than a fusion reading tensors that exist under different branches, a
//     fusion some branch gives none of its inputs, an ensemble output that exists only under
//     a branch;
//   - a fusion whose inputs differ in datatype or shape (CONCAT: off its axis).
// Each switch branch is a condition; the conditions form a tree (a switch inside a branch has
// its branches under it), and what a step writes exists exactly when its condition holds.
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

// What a step does: run a model, decide a switch, or fuse tensors in the server.
enum class StepKind { kModel, kSwitch, kFusion };

// A switch step: what it reads and where each value leads.
struct PlanSwitch {
  // The request parameter it reads, or "" when it reads `tensor` (an ensemble tensor id).
  std::string parameter;
  int tensor = -1;
  bool argmax = false;
  // Branch names, and per branch the steps (indices) that run only when it is taken.
  std::vector<std::string> branch_names;
  std::vector<std::vector<int>> branch_steps;
  // Each value a branch lists, with that branch.
  std::vector<std::pair<std::string, int>> values;
  // The branch taken when the parameter is missing or no value matches; -1 = none (the request
  // then fails with INVALID_ARGUMENT).
  int default_branch = -1;
};

// A fusion step run in the server (op SELECT, CONCAT, MEAN or WEIGHTED_SUM; a MODEL fusion is a
// model step that may read tensors of branches, leaving out those that do not exist).
struct PlanFusion {
  config::ModelEnsembling::StepFusion::Op op = config::ModelEnsembling::StepFusion::SELECT;
  // Resolved: 0 < axis < rank.
  int axis = 0;
  // One per input (WEIGHTED_SUM), in `PlanStep::inputs` order.
  std::vector<float> weights;
};

struct PlanStep {
  // "step 1 (model 'preprocess')", "step 2 (switch 'by_group')": how messages name it.
  std::string label;
  StepKind kind = StepKind::kModel;
  std::string model_name;
  int64_t model_version = -1;
  // The step model's input name and the ensemble tensor id it reads (a switch's and an
  // in-server fusion's have no model name: "").
  std::vector<std::pair<std::string, int>> inputs;
  // The step model's output name and the ensemble tensor id it writes.
  std::vector<std::pair<std::string, int>> outputs;
  // Distinct tensors read that other steps write, plus one for the decision of the switch whose
  // branch lists the step: the step becomes ready when this many are settled (written, or
  // known never to be), what it reads of the request being there from the start.
  int dependency_count = 0;
  // The switch step (index) and branch that list this step; -1 when none does.
  int switch_step = -1;
  int branch = -1;
  // The step's condition: the deepest switch branch it runs under (its own, or one of what it
  // reads), as the switch step and branch; -1 when it runs for every request. A switch that
  // sends rows down different branches runs the step on that branch's rows.
  int condition_switch = -1;
  int condition_branch = -1;
  // A fusion (op MODEL included): runs on the inputs that exist, when at least one does; any
  // other step whose input a step never wrote (an untaken branch) does not run either.
  bool fuses = false;
  PlanSwitch switch_plan;  // kSwitch
  PlanFusion fusion;       // kFusion
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
  // The config's `name` of step `index` ("" when it has none).
  const std::string& step_name(int index) const { return step_names_[index]; }
  // The step that writes tensor `id`, or -1 for an ensemble input.
  int producer(int id) const { return producer_[id]; }
  // Whether the ensemble runs in batches (its max_batch_size > 0).
  bool batching() const { return batching_; }
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
  std::vector<int> producer_;
  std::vector<std::string> step_names_;
  bool batching_ = false;
  int max_inflight_per_step_ = 0;
  int step_queue_size_ = 1024;
};

}  // namespace brigade::route

#endif  // BRIGADE_ROUTE_ENSEMBLE_PLAN_H_
