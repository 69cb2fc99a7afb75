#ifndef BRIGADE_SERVER_DEFAULT_BACKENDS_H_
#define BRIGADE_SERVER_DEFAULT_BACKENDS_H_

// The backends compiled into this build: always the builtin one and brigade_process (src/process's
// pre- and post-processing steps); TorchScript and the ONNX engine when the build includes them
// (BRIGADE_WITH_TORCH / BRIGADE_WITH_ONNX).

#include <memory>

#include "engine/backend.h"

namespace brigade {

std::unique_ptr<engine::BackendRegistry> MakeDefaultBackendRegistry();

}  // namespace brigade

#endif  // BRIGADE_SERVER_DEFAULT_BACKENDS_H_
