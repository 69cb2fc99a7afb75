#ifndef BRIGADE_REPOSITORY_ATTACHED_STEP_H_
#define BRIGADE_REPOSITORY_ATTACHED_STEP_H_

// AttachedStep: a brigade_process step attached to a model by its config's `preprocess` or
// `postprocess` section. It is loaded through the brigade_process backend like a model of its
// own, but has no queue, scheduler or statistics: the request pipeline runs it inline, on its
// pre-processing pool (preprocess, stage t0 -> t1) or on the thread that answers (postprocess,
// t3 -> t4), so an attached step costs the step's own time and nothing else (an ensemble step
// costs a queue hop). Its inputs are the clients' tensors and its outputs the model's
// (preprocess), or the model's outputs and the clients' tensors (postprocess), each in the
// declared order.
//
// Thread safety: Run may be called from any number of threads at once; each call takes an idle
// instance of the step (or makes one) under a lock and runs it outside the lock. Instances are
// cheap (a step's state is immutable) and at most kMaxIdleInstances are kept.
// Ownership: owned by its ModelVersion (shared_ptr, so requests in flight keep it).
// Failure: Create answers the step's load error (an unknown step or parameter, tensors that do
// not fit), naming the model and the section; Run answers the step's error for bad input.

#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "engine/backend.h"

namespace brigade::repository {

class AttachedStep {
 public:
  struct Options {
    // "<model>.preprocess" or "<model>.postprocess": names the step in every error.
    std::string name;
    // The brigade_process backend (borrowed for the call).
    engine::Backend* backend = nullptr;
    // The model's version directory: where the step's files (labels, vocab) are read.
    std::string version_dir;
    int max_batch_size = 0;
    std::map<std::string, std::string> parameters;
    std::vector<engine::TensorSpec> inputs;
    std::vector<engine::TensorSpec> outputs;
  };
  static constexpr size_t kMaxIdleInstances = 64;

  static absl::StatusOr<std::shared_ptr<const AttachedStep>> Create(Options options);

  const std::string& name() const { return name_; }
  const std::vector<engine::TensorSpec>& inputs() const { return inputs_; }
  const std::vector<engine::TensorSpec>& outputs() const { return outputs_; }

  // Runs the step: `inputs` in inputs() order, `outputs` cleared and filled in outputs() order.
  absl::Status Run(std::span<const Tensor> inputs, std::vector<Tensor>* outputs) const;

  struct ConstructionTag {};
  AttachedStep(ConstructionTag, std::string name, std::shared_ptr<engine::Model> model,
               std::vector<engine::TensorSpec> inputs, std::vector<engine::TensorSpec> outputs)
      : name_(std::move(name)),
        model_(std::move(model)),
        inputs_(std::move(inputs)),
        outputs_(std::move(outputs)) {}

 private:
  const std::string name_;
  const std::shared_ptr<engine::Model> model_;
  const std::vector<engine::TensorSpec> inputs_;
  const std::vector<engine::TensorSpec> outputs_;
  mutable absl::Mutex mu_;
  mutable std::vector<std::unique_ptr<engine::ModelInstance>> idle_ ABSL_GUARDED_BY(mu_);
};

}  // namespace brigade::repository

#endif  // BRIGADE_REPOSITORY_ATTACHED_STEP_H_
