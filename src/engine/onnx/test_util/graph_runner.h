#ifndef BRIGADE_ENGINE_ONNX_TEST_UTIL_GRAPH_RUNNER_H_
#define BRIGADE_ENGINE_ONNX_TEST_UTIL_GRAPH_RUNNER_H_

// Test helpers for graph passes: load a built model into a Graph, run a Graph through the real
// planner and kernels, count ops, and compare outputs — so a pass test can assert both the
// rewrite (what nodes remain) and that the rewritten graph computes the same outputs.

#include <span>
#include <string_view>
#include <vector>

#include "core/tensor.h"
#include "engine/onnx/ir/graph.h"
#include "engine/onnx/test_util/onnx_builder.h"

namespace brigade::engine::onnx {

// Loads `builder`'s model (checker and canonicalization included, no passes).
Graph LoadGraph(const OnnxBuilder& builder);

// Runs `graph` on `inputs` with `threads` threads; fails the test on error.
std::vector<Tensor> RunGraph(Graph graph, std::span<const Tensor> inputs, int threads = 1);

// Live nodes of `op_type` (any domain).
int CountOps(const Graph& graph, std::string_view op_type);

// Largest |a - b| over two fp32 tensors of equal shape (infinity on shape mismatch).
float MaxAbsDiff(const Tensor& a, const Tensor& b);

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_TEST_UTIL_GRAPH_RUNNER_H_
