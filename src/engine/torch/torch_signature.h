#ifndef BRIGADE_ENGINE_TORCH_TORCH_SIGNATURE_H_
#define BRIGADE_ENGINE_TORCH_TORCH_SIGNATURE_H_

// How a TorchScript model's inputs and outputs get names, types and shapes, and how they map onto
// forward()'s arguments and results. TorchScript records neither tensor names nor shapes, so:
//
// 1. Declared specs (config.pbtxt, via ModelLoadOptions) win.
// 2. Otherwise the model file may carry its own signature as the TorchScript extra file
//    `brigade/signature.json` (Python: `module.save(path, _extra_files={...})`):
//
//      {"inputs":  [{"name": "image",  "datatype": "FP32", "shape": [-1, 1, 28, 28]}],
//       "outputs": [{"name": "logits", "datatype": "FP32", "shape": [-1, 10]}]}
//
//    Types are protocol names ("FP32") or config names ("TYPE_FP32"); shapes are full shapes,
//    batch dimension included, -1 for a dimension that varies.
// 3. Otherwise loading fails and asks for inputs/outputs in config.pbtxt.
//
// Inputs and outputs are resolved independently (a config may declare only its inputs).
//
// Mapping inputs to forward(self, a, b, ...) arguments, first rule that applies:
//   - every input name is the name of a forward() argument: by name;
//   - every input name follows Triton's "<name>__<index>" convention (INPUT__0, INPUT__1):
//     input INPUT__k is argument k, whatever the declaration order (as in Triton);
//   - otherwise: positionally, in declared order.
// Mapping outputs to what forward() returns (a Tensor, or a tuple/list of Tensors): by index when
// every output name follows the "__<index>" convention (OUTPUT__0), otherwise in declared order.
//
// These are pure functions over specs and names (no libtorch), safe from any thread. Failures are
// INVALID_ARGUMENT naming the field or tensor at fault; callers prefix the model name.

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/model.h"

namespace brigade::engine {

// Name of the TorchScript extra file holding a model's signature.
inline constexpr std::string_view kTorchSignatureFile = "brigade/signature.json";

// Parses the JSON form shown above. Each of "inputs" and "outputs" must be a non-empty list of
// specs with unique, non-empty names.
absl::StatusOr<ModelSignature> ParseTorchSignatureJson(std::string_view json);

// Rule 1-3 above: `embedded` is the signature parsed from the model file, or null when the file
// carries none. options.model_path names the file in messages.
absl::StatusOr<ModelSignature> ResolveTorchSignature(const ModelLoadOptions& options,
                                                     const ModelSignature* embedded);

// The index in a Triton-convention name ("INPUT__3" → 3); nullopt when `name` does not follow
// the convention.
std::optional<int> TritonTensorIndex(std::string_view name);

// For each input, the forward() argument (0 = the first after `self`) it is passed as.
// `argument_names` are forward()'s argument names without `self`. Fails when there are more inputs
// than arguments or two inputs land on one argument.
absl::StatusOr<std::vector<int>> MapInputsToArguments(std::span<const TensorSpec> inputs,
                                                      std::span<const std::string> argument_names);

// For each output, the index of the forward() result (tuple/list element) it takes. Fails when two
// outputs name the same index.
absl::StatusOr<std::vector<int>> MapOutputsToResults(std::span<const TensorSpec> outputs);

}  // namespace brigade::engine

#endif  // BRIGADE_ENGINE_TORCH_TORCH_SIGNATURE_H_
