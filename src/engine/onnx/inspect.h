#ifndef BRIGADE_ENGINE_ONNX_INSPECT_H_
#define BRIGADE_ENGINE_ONNX_INSPECT_H_

// InspectOnnxModel: the text `brigade inspect MODEL.onnx` prints — what the model is, what the
// engine makes of it, and what one run costs:
//
//   model        file, producer, IR version, opsets
//   inputs       name, type, shape (-1 = variable)        outputs   likewise
//   parameters   count and bytes of the initializers
//   ops          histogram before and after optimization
//   passes       node count after each graph pass (e.g. 174 → 122 → ... → 68)
//   plan         for a batch-`batch` run: steps, FLOPs (conv/matmul, 2×MAC), arena bytes,
//                packed weight bytes — or why the model cannot run
//
// Thread safety: a free function; loads the model itself. Errors: as the loader's (NOT_FOUND,
// INVALID_ARGUMENT); a model the engine cannot run still gets a description, with the reason.

#include <string>

#include "absl/status/statusor.h"

namespace brigade::engine::onnx {

struct InspectOptions {
  // Batch size used for the plan section (variable first dims take it, other variable dims 1).
  int batch = 1;
  // Run the graph passes (the serving default).
  bool optimize = true;
};

absl::StatusOr<std::string> InspectOnnxModel(const std::string& path,
                                             const InspectOptions& options = {});

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_INSPECT_H_
