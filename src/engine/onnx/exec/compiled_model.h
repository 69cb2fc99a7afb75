#ifndef BRIGADE_ENGINE_ONNX_EXEC_COMPILED_MODEL_H_
#define BRIGADE_ENGINE_ONNX_EXEC_COMPILED_MODEL_H_

// CompiledModel: what every instance of one loaded model shares — the optimized graph, the
// oneDNN CPU engine, the packed weights, and facts the planner needs about the graph: which
// graph inputs decide shapes through their contents (their values join the plan key), how many
// readers each value has, and whether its batch rows are independent (so a batch may be split).
//
// Precision: Options::precision asks for bf16 multiply-adds (kernel.h, ComputePrecision). On a
// CPU without native bf16 the model compiles in fp32 instead and precision_note() says why, so a
// repository that names bf16 still loads on every machine, and the fallback is reported.
//
// Released sources: an fp32 initializer that every node reading it packs (a Conv's or a Linear's
// weight) need not stay beside its packed copy. PlanAndReleaseSources (planner.h) plans one run
// and frees each such constant as soon as its last reader has packed it, so the load's peak
// holds one of the two copies, not both; the graph keeps the value's type and shape with null
// data, and released_key() names the packed copy a later plan rebuilds the source from when it
// needs the weight in another layout (PackConstant), or a node reads it unpacked (the planner).
//
// Thread safety: immutable after Compile() except `weights`, which is internally synchronized,
// and the released sources, which change only inside PlanAndReleaseSources: call it before the
// model is shared (no other session may plan meanwhile).
// Ownership: instances hold a shared_ptr, so a CompiledModel lives as long as its last instance.

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/onnx/ir/graph.h"
#include "engine/onnx/kernels/kernel.h"
#include "engine/onnx/kernels/packed_weights.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace brigade::engine::onnx {

// The model file's metadata_props key that asks for a precision ("fp32" or "bf16"), written by
// `brigade optimize quantize --mode bf16`; other runtimes ignore it and run the file as fp32.
inline constexpr std::string_view kPrecisionMetadataKey = "brigade.precision";

// "fp32" / "bf16" → the precision; nullopt for anything else.
std::optional<ComputePrecision> ParsePrecision(std::string_view name);

class CompiledModel {
 public:
  struct Options {
    ComputePrecision precision = ComputePrecision::kFp32;
  };

  // `graph` must contain only ops the kernel registry supports (the loader checks).
  static absl::StatusOr<std::shared_ptr<CompiledModel>> Compile(std::string name, Graph graph,
                                                                Options options);
  static absl::StatusOr<std::shared_ptr<CompiledModel>> Compile(std::string name, Graph graph) {
    return Compile(std::move(name), std::move(graph), Options{});
  }

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
  // The precision kernels are built with, and why it differs from the one asked for (empty when
  // it does not).
  ComputePrecision precision() const { return precision_; }
  const std::string& precision_note() const { return precision_note_; }

  // Per main-graph value: the packed-weights key its released source is rebuilt from; empty
  // while the value holds its data.
  const std::vector<std::string>& released_keys() const { return released_keys_; }
  // Bytes of the constants released so far.
  size_t released_bytes() const { return released_bytes_; }
  // Frees constant `id`'s data when it may be released (fp32, not an input or output, no other
  // constant sharing its bytes, not read by a node with subgraphs) and as many packed fp32
  // copies were made from exactly its bytes as it has readers. Only PlanAndReleaseSources
  // calls it, once the value's last reader in its plan has been built.
  void ReleaseIfPacked(ValueId id);

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
  ComputePrecision precision_ = ComputePrecision::kFp32;
  std::string precision_note_;
  std::vector<bool> releasable_;
  std::vector<std::string> released_keys_;
  size_t released_bytes_ = 0;
};

// Per value of `graph`: the nodes reading it plus one per graph output slot naming it.
std::vector<int> CountUses(const Graph& graph);

// Per value of `graph`: whether CompiledModel::ReleaseIfPacked may free its constant data.
std::vector<bool> ReleasableConstants(const Graph& graph);

// Per graph input of `graph`: whether its contents (not only its shape) decide some shape, so
// that the planner must know them (CompiledModel::shape_inputs; for a subgraph, which of its
// inputs the enclosing node must know at plan time).
std::vector<bool> ShapeDecidingInputs(const Graph& graph);

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_EXEC_COMPILED_MODEL_H_
