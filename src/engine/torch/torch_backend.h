#ifndef BRIGADE_ENGINE_TORCH_TORCH_BACKEND_H_
#define BRIGADE_ENGINE_TORCH_TORCH_BACKEND_H_

// TorchBackend (platform "pytorch_libtorch", backend "pytorch", file "model.pt"): serves
// TorchScript modules saved with torch.jit.save / ScriptModule.save, on CPU, through libtorch.
//
// Load reads the file with torch::jit::load (tensors mapped to the CPU), puts the module in eval
// mode and resolves the signature: the config's declared inputs/outputs, else the model's own
// `brigade/signature.json` extra file, else an error asking for declarations in config.pbtxt
// (see torch_signature.h, which also covers Triton's INPUT__0 / OUTPUT__0 naming). The model
// and its instances are described in torch_model.h.
//
// Process-wide settings, made by the first Load and logged once: libtorch's inter-op pool gets one
// thread (the scheduler runs instances on its own threads; more would only compete for the same
// cores), and OpenBLAS's own pool is kept within the instances' budget (blas_threads.h).
// Intra-op threads are per instance (InstanceOptions).
// OpenMP's wait policy cannot be set from here: libgomp reads OMP_WAIT_POLICY when the process
// starts, so it belongs in the server's environment. It matters only for instances with more than
// one intra-op thread. Measured on the 2-core dev machine (fashion_mnist, batch 1): with the cores
// saturated by other processes, 2 spinning threads took ~90 ms per call against ~0.3 ms for one
// thread; OMP_WAIT_POLICY=PASSIVE brought it to ~0.5 ms but cost 3-4x on an idle machine. One
// thread per instance (and as many instances as cores) avoids both.
//
// Thread safety: Load may run concurrently for different models. Failure: NOT_FOUND when the file
// does not exist; INVALID_ARGUMENT when it is not a loadable TorchScript module, its signature
// file is malformed, or its forward() does not fit the signature. Messages name the model and
// the file. No libtorch exception escapes.

#include <memory>

#include "engine/backend.h"

namespace brigade::engine {

class TorchBackend final : public Backend {
 public:
  std::string_view name() const override { return "pytorch"; }
  std::string_view platform() const override { return "pytorch_libtorch"; }
  std::string_view default_model_filename() const override { return "model.pt"; }
  absl::StatusOr<std::shared_ptr<Model>> Load(const ModelLoadOptions& options) override;
};

}  // namespace brigade::engine

#endif  // BRIGADE_ENGINE_TORCH_TORCH_BACKEND_H_
