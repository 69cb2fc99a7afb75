#ifndef BRIGADE_ENGINE_ONNX_PASSES_PASS_UTIL_H_
#define BRIGADE_ENGINE_ONNX_PASSES_PASS_UTIL_H_

// Helpers the passes share: evaluating a node on constant inputs with the engine's own kernels
// (so folding computes exactly what execution would), reading small constants, and matching
// single-consumer chains.
// Thread safety: free functions.

#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "core/tensor.h"
#include "engine/onnx/ir/graph.h"

namespace brigade::engine::onnx {

// Runs `node` (all inputs constant) with its kernel and returns its outputs (absent outputs
// give empty tensors). UNIMPLEMENTED when the op has no kernel or cannot run on constants;
// RESOURCE_EXHAUSTED, before anything is allocated, when its results and scratch together would
// take more than `max_bytes` (a model file's shapes are untrusted: a ConstantOfShape or Expand
// can ask for any size).
absl::StatusOr<std::vector<Tensor>> EvaluateNode(const Graph& graph, const Node& node,
                                                 size_t max_bytes);

// The constant behind `id`, or null.
const Tensor* ConstantOf(const Graph& graph, ValueId id);

// The single float value of a one-element fp32/fp64 constant.
std::optional<double> ScalarConstant(const Graph& graph, ValueId id);

// True when `node` is `op_type` in the default domain.
bool IsOp(const Node& node, std::string_view op_type);

// The node producing `id` when it is `op_type` and `id` has exactly one reader, else null.
Node* SoleProducer(Graph* graph, const GraphIndex& index, ValueId id, std::string_view op_type);

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_PASSES_PASS_UTIL_H_
