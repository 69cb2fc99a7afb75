#include "repository/attached_step.h"

#include <utility>

#include "core/check.h"
#include "core/strings.h"

namespace brigade::repository {

absl::StatusOr<std::shared_ptr<const AttachedStep>> AttachedStep::Create(Options options) {
  if (options.backend == nullptr) {
    return absl::FailedPreconditionError(
        StrCat(options.name, ": no brigade_process backend to run the step"));
  }
  engine::ModelLoadOptions load;
  load.model_name = options.name;
  load.model_path = options.version_dir;
  load.max_batch_size = options.max_batch_size;
  load.declared_inputs = options.inputs;
  load.declared_outputs = options.outputs;
  load.parameters = std::move(options.parameters);
  absl::StatusOr<std::shared_ptr<engine::Model>> model = options.backend->Load(load);
  if (!model.ok()) return model.status();
  return std::make_shared<const AttachedStep>(ConstructionTag(), std::move(options.name),
                                              *std::move(model), std::move(options.inputs),
                                              std::move(options.outputs));
}

absl::Status AttachedStep::Run(std::span<const Tensor> inputs, std::vector<Tensor>* outputs) const {
  std::unique_ptr<engine::ModelInstance> instance;
  {
    absl::MutexLock lock(&mu_);
    if (!idle_.empty()) {
      instance = std::move(idle_.back());
      idle_.pop_back();
    }
  }
  if (instance == nullptr) {
    absl::StatusOr<std::unique_ptr<engine::ModelInstance>> made = model_->CreateInstance({});
    if (!made.ok()) return made.status();
    instance = *std::move(made);
  }
  absl::Status status = instance->Execute(inputs, outputs);
  BRIGADE_CHECK(!status.ok() || outputs->size() == outputs_.size(),
                "a brigade_process step gives the outputs its load accepted");
  absl::MutexLock lock(&mu_);
  if (idle_.size() < kMaxIdleInstances) idle_.push_back(std::move(instance));
  return status;
}

}  // namespace brigade::repository
