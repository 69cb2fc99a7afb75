#ifndef BRIGADE_ENGINE_ONNX_ONNX_BACKEND_H_
#define BRIGADE_ENGINE_ONNX_ONNX_BACKEND_H_

// OnnxBackend (platform "onnxruntime_onnx", backend "onnxruntime", file "model.onnx"): Brigade's
// own ONNX runtime. Load() reads the model (loader/), rewrites it with the graph passes
// (passes/), and compiles it (exec/CompiledModel); each instance is a Session with its own plan
// cache, arena and oneDNN stream, running with InstanceOptions::intra_op_threads threads.
//
// Config parameters (config.pbtxt `parameters`):
//   optimize            "true" (default) / "false": run the graph passes
//   precision           "fp32" / "bf16": multiply-adds of convolutions and constant-weight
//                       matmuls (kernel.h's ComputePrecision). Default: the model file's
//                       metadata_props entry "brigade.precision" (`brigade optimize quantize
//                       --mode bf16` writes it), else fp32. Another value fails the load. On a
//                       CPU without native bf16 the model runs fp32 and the load logs a warning.
//
// The signature comes from the model: input/output names, element types and shapes (symbolic
// or unknown dims are -1). When the config declares inputs/outputs, names must exist in the
// model and types must agree; a config with max_batch_size > 0 needs a variable first dim.
//
// Optional inputs (ONNX's own kind): a graph input with an initializer of the same name is a
// constant unless the config declares it as an input. Then requests may give it, and with
// `optional: true` may omit it, running with the initializer. `optional: true` on an input
// without an initializer fails the load, naming model and input.
//
// Thread safety: Load() may run concurrently for different models; see engine::Model for the
// rest. Failure: NOT_FOUND for a missing file, INVALID_ARGUMENT for malformed models or a config
// that contradicts the model, UNIMPLEMENTED for unsupported ops (naming node, op and opset).

#include <memory>

#include "engine/backend.h"

namespace brigade::engine {

class OnnxBackend final : public Backend {
 public:
  std::string_view name() const override { return "onnxruntime"; }
  std::string_view platform() const override { return "onnxruntime_onnx"; }
  std::string_view default_model_filename() const override { return "model.onnx"; }
  absl::StatusOr<std::shared_ptr<Model>> Load(const ModelLoadOptions& options) override;
};

}  // namespace brigade::engine

#endif  // BRIGADE_ENGINE_ONNX_ONNX_BACKEND_H_
