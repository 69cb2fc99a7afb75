#ifndef BRIGADE_ENGINE_ONNX_EXEC_COMPILED_MODEL_H_
#define BRIGADE_ENGINE_ONNX_EXEC_COMPILED_MODEL_H_

// CompiledModel: what every instance of one loaded model shares — the optimized graph, the
// oneDNN CPU engine, the packed weights, and facts the planner needs about the graph: which
// graph inputs decide shapes through their contents (their values join the plan key), how many
// readers each value has, and whether its batch rows are independent (so a batch may be split).
//
// Thread safety: immutable after Compile() except `weights`, which is internally synchronized.
// Ownership: instances hold a shared_ptr, so a CompiledModel lives as long as its last instance.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/onnx/ir/graph.h"
#include "engine/onnx/kernels/packed_weights.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace brigade::engine::onnx {

class CompiledModel {
 public:
  // `graph` must contain only ops the kernel registry supports (the loader checks).
  static absl::StatusOr<std::shared_ptr<CompiledModel>> Compile(std::string name, Graph graph);

  const std::string& name() const { return name_; }
  const Graph& graph() const { return graph_; }
  const dnnl::engine& engine() const { return engine_; }
  PackedWeights& weights() const { return *weights_; }
  // Per graph input: true when its contents (not only its shape) decide some shape.
  const std::vector<bool>& shape_inputs() const { return shape_inputs_; }
  // Per value: number of nodes reading it plus one per graph output slot naming it.
  const std::vector<int>& use_counts() const { return use_counts_; }
  // True when each output row depends only on the same input row (batch_split.h).
  bool rows_independent() const { return rows_independent_; }

 private:
  struct Token {};

 public:
  explicit CompiledModel(Token) {}

 private:
  std::string name_;
  Graph graph_;
  dnnl::engine engine_;
  std::unique_ptr<PackedWeights> weights_;
  std::vector<bool> shape_inputs_;
  std::vector<int> use_counts_;
  bool rows_independent_ = false;
};

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_EXEC_COMPILED_MODEL_H_
