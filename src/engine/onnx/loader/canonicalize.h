#ifndef BRIGADE_ENGINE_ONNX_LOADER_CANONICALIZE_H_
#define BRIGADE_ENGINE_ONNX_LOADER_CANONICALIZE_H_

// Rewrites older opset forms into the forms the kernels implement, so each kernel handles one
// convention: Constant nodes become constant values; attributes that later opsets turned into
// inputs (Clip min/max < 11, Pad pads/value < 11, Slice starts/ends/axes < 10, Squeeze/Unsqueeze
// axes < 13, Split split < 13) become constant inputs.
//
// Errors: INVALID_ARGUMENT naming the node (a Constant without a usable value).
// Thread safety: operates on one graph.

#include "absl/status/status.h"
#include "engine/onnx/ir/graph.h"

namespace brigade::engine::onnx {

absl::Status CanonicalizeGraph(Graph* graph);

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_LOADER_CANONICALIZE_H_
