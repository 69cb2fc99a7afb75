#ifndef BRIGADE_ENGINE_TORCH_TORCH_MODEL_H_
#define BRIGADE_ENGINE_TORCH_TORCH_MODEL_H_

// TorchModel: a loaded TorchScript module behind the engine::Model interface, and the instances
// that run its forward().
//
//   TorchModel::Create(options, module, signature)   checks forward()'s schema against the
//       signature once: inputs map onto forward() arguments (torch_signature.h), every mapped
//       argument is a Tensor, unmapped ones have defaults, and the declared return type can yield
//       the outputs (a Tensor, a tuple or list of Tensors; `Any` is checked per call). An input
//       whose argument has a default (`mask: Optional[Tensor] = None`) is optional in the
//       signature, and Execute runs an omitted one (an empty Tensor) with that default; an input
//       the config makes optional on an argument without a default fails Create, naming both.
//   instance->Execute(inputs, &outputs)   checks the inputs against the signature (count, type,
//       shape with the batch and -1 dimensions free), wraps them without copying, runs forward()
//       under c10::InferenceMode, and wraps the results without copying (torch_tensor.h), checking
//       each result's type and shape against the signature.
//
// Threads: each instance runs forward() with InstanceOptions::intra_op_threads OpenMP threads.
// libtorch keeps that count per OS thread (omp_set_num_threads), so CreateInstance applies it on
// the calling thread (the instance thread, per the Model contract) and Execute re-applies it if it
// finds itself on a thread with another count. All instances share one module (TorchScript
// modules may run forward() from several threads at once); they keep it alive themselves, so they
// may outlive the TorchModel.
//
// Failure: Create returns INVALID_ARGUMENT naming the model and the argument, input or output at
// fault. Execute returns INVALID_ARGUMENT for inputs that do not fit the signature, INTERNAL when
// forward() throws or returns something the signature does not describe; no libtorch exception
// escapes, and the instance stays usable after any error.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/model.h"
#include "torch/script.h"

namespace brigade::engine {

// What a TorchModel and all of its instances share; immutable after TorchModel::Create.
struct TorchModelState;

class TorchModel final : public Model {
 public:
  // `module` is a loaded TorchScript module (in eval mode); `signature` comes from
  // ResolveTorchSignature. Options supply the model name (for messages) and max_batch_size.
  static absl::StatusOr<std::shared_ptr<TorchModel>> Create(const ModelLoadOptions& options,
                                                            torch::jit::Module module,
                                                            ModelSignature signature);

  const ModelSignature& signature() const override;

  absl::StatusOr<std::unique_ptr<ModelInstance>> CreateInstance(
      const InstanceOptions& options) override;

  // For Create (via make_shared); `state` must have passed Create's checks.
  explicit TorchModel(std::shared_ptr<const TorchModelState> state) : state_(std::move(state)) {}

 private:
  std::shared_ptr<const TorchModelState> state_;
};

}  // namespace brigade::engine

#endif  // BRIGADE_ENGINE_TORCH_TORCH_MODEL_H_
