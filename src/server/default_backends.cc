#include "server/default_backends.h"

#include "engine/builtin/builtin_backend.h"
#include "engine/process/process_backend.h"
#if BRIGADE_HAVE_TORCH
#include "engine/torch/torch_backend.h"
#endif
#if BRIGADE_HAVE_ONNX
#include "engine/onnx/onnx_backend.h"
#endif

namespace brigade {

std::unique_ptr<engine::BackendRegistry> MakeDefaultBackendRegistry() {
  auto registry = std::make_unique<engine::BackendRegistry>();
  registry->Register(std::make_unique<engine::BuiltinBackend>());
  registry->Register(std::make_unique<engine::ProcessBackend>());
#if BRIGADE_HAVE_TORCH
  registry->Register(std::make_unique<engine::TorchBackend>());
#endif
#if BRIGADE_HAVE_ONNX
  registry->Register(std::make_unique<engine::OnnxBackend>());
#endif
  return registry;
}

}  // namespace brigade
