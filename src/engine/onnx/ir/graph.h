#ifndef BRIGADE_ENGINE_ONNX_IR_GRAPH_H_
#define BRIGADE_ENGINE_ONNX_IR_GRAPH_H_

// The engine's graph IR: what the loader builds from an ONNX ModelProto, what the passes rewrite
// and what the planner executes.
//
//   Value  one tensor edge: name, element type, static shape when known (-1 = unknown dim), and
//          its contents when it is a constant (initializer or folded result).
//   Node   one operator: ONNX op type and domain, the opset version in effect, input and output
//          value ids (kNoValue marks an omitted optional input), attributes.
//   Graph  values (addressed by ValueId, never renumbered), nodes in topological order, the graph
//          inputs and outputs, and the opset imports.
//
// Passes mark nodes `removed` and rewire inputs, then call Compact(); values are never deleted
// (ids stay valid), but Compact() drops the contents of constants nothing uses any more so that
// folded-away weights do not stay in memory.
//
// Thread safety: none; a Graph is built and rewritten by one thread, then shared read-only.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "core/data_type.h"
#include "core/shape.h"
#include "core/tensor.h"
#include "engine/onnx/ir/attribute.h"

namespace brigade::engine::onnx {

using ValueId = int32_t;
inline constexpr ValueId kNoValue = -1;

// Domain of the ops the passes create (fused convolutions, matmuls, attention...).
inline constexpr std::string_view kBrigadeDomain = "ai.brigade";

struct Value {
  std::string name;
  DataType dtype = DataType::kInvalid;
  // Static shape; -1 marks a dimension unknown before run time. nullopt: rank unknown.
  std::optional<Shape> shape;
  // Contents of a constant value.
  std::optional<Tensor> constant;

  bool is_constant() const { return constant.has_value(); }
};

struct Node {
  std::string name;
  std::string op_type;
  std::string domain;  // "" is the default ONNX domain
  int opset = 0;       // version of `domain` the model imports
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;
  AttributeMap attributes;
  bool removed = false;

  // Input `i`, or kNoValue when absent or omitted.
  ValueId input(size_t i) const { return i < inputs.size() ? inputs[i] : kNoValue; }
  bool has_input(size_t i) const { return input(i) != kNoValue; }
};

class Graph {
 public:
  ValueId AddValue(Value value);
  // Adds a constant value named after `name_hint` (made unique).
  ValueId AddConstant(std::string_view name_hint, Tensor tensor);
  // Adds a value with a fresh name derived from `name_hint`.
  ValueId AddIntermediate(std::string_view name_hint, DataType dtype,
                          std::optional<Shape> shape = std::nullopt);

  Value& value(ValueId id) { return values_[static_cast<size_t>(id)]; }
  const Value& value(ValueId id) const { return values_[static_cast<size_t>(id)]; }
  size_t num_values() const { return values_.size(); }
  // kNoValue when no value has this name.
  ValueId FindValue(std::string_view name) const;

  std::vector<Node>& nodes() { return nodes_; }
  const std::vector<Node>& nodes() const { return nodes_; }

  std::vector<ValueId>& inputs() { return inputs_; }
  const std::vector<ValueId>& inputs() const { return inputs_; }
  std::vector<ValueId>& outputs() { return outputs_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }

  std::map<std::string, int>& opsets() { return opsets_; }
  const std::map<std::string, int>& opsets() const { return opsets_; }
  // The imported version of `domain` ("" = ai.onnx), 0 when not imported.
  int opset(std::string_view domain) const;

  // A name no value has yet, derived from `hint`.
  std::string UniqueName(std::string_view hint);

  bool IsGraphOutput(ValueId id) const;
  bool IsGraphInput(ValueId id) const;

  // Rewires every use of `from` (node inputs and graph outputs) to `to`.
  void ReplaceAllUses(ValueId from, ValueId to);

  // Drops removed nodes and the contents of constants no node or output uses any more.
  void Compact();

  // Reorders nodes topologically, keeping the current order where dependencies allow.
  // INVALID_ARGUMENT naming a node on a cycle, or a node reading a value nothing produces.
  absl::Status SortTopologically();

  // Number of nodes not marked removed.
  size_t live_node_count() const;

 private:
  std::vector<Value> values_;
  std::vector<Node> nodes_;
  std::vector<ValueId> inputs_;
  std::vector<ValueId> outputs_;
  std::map<std::string, int> opsets_;
  std::map<std::string, ValueId, std::less<>> names_;
  int64_t name_counter_ = 0;
};

// The subgraph attributes of `node` (If's branches, Loop's and Scan's body), in attribute-name
// order; empty for every other op.
std::vector<Attribute*> Subgraphs(Node& node);
std::vector<const Attribute*> Subgraphs(const Node& node);

// Producer and consumers of every value, computed from a graph. Invalidated by any change to
// the graph's nodes; passes rebuild it after each rewrite.
class GraphIndex {
 public:
  explicit GraphIndex(const Graph& graph);

  // Index into graph.nodes() of the producer, or -1 (graph input, constant).
  int producer(ValueId id) const { return producers_[static_cast<size_t>(id)]; }
  // Node indices reading `id`, once per reading node (a node reading it twice is listed once).
  const std::vector<int>& consumers(ValueId id) const {
    return consumers_[static_cast<size_t>(id)];
  }
  // True when exactly one node reads `id` and it is not a graph output.
  bool HasSingleConsumer(ValueId id) const;

 private:
  const Graph& graph_;
  std::vector<int> producers_;
  std::vector<std::vector<int>> consumers_;
};

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_IR_GRAPH_H_
