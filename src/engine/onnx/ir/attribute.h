#ifndef BRIGADE_ENGINE_ONNX_IR_ATTRIBUTE_H_
#define BRIGADE_ENGINE_ONNX_IR_ATTRIBUTE_H_

// Node attributes of the engine's IR: ONNX's AttributeProto reduced to the kinds the engine
// executes (numbers, strings, tensors, lists of those, and subgraphs).
//
// A subgraph (If's branches, Loop's and Scan's body) is an engine Graph of its own. ONNX lets a
// subgraph read any value of an enclosing graph by name; the loader makes every such read
// explicit, so that each graph's passes and planner see all of a node's dependencies as node
// inputs: the subgraph's inputs are its formal ONNX inputs followed by one "captured" input per
// outer value it reads, and `captures[j]` names the node input (an index into Node::inputs,
// appended after the op's own inputs) that feeds captured input j. A value an inner subgraph
// reads from two levels up is captured by the graph in between too.
//
// Getters never fail: an absent attribute, or one of another kind, yields the caller's default.
// The loader has already run ONNX's checker, which validates attribute kinds against each op's
// schema, so a wrong kind can only come from a hostile file — and then the default is a safe,
// deterministic answer (kernels validate the values they rely on).
//
// Thread safety: a value type; const methods may be called concurrently.

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/tensor.h"

namespace brigade::engine::onnx {

class Graph;

// A subgraph held by value: copying an attribute (so a node, a graph) copies its subgraphs, and
// rewriting one copy never changes another (the passes rewrite subgraphs in place). Tensors in a
// copy share their storage, as Tensor copies do.
class SubgraphPtr {
 public:
  SubgraphPtr();
  explicit SubgraphPtr(Graph graph);
  SubgraphPtr(const SubgraphPtr& other);
  SubgraphPtr& operator=(const SubgraphPtr& other);
  SubgraphPtr(SubgraphPtr&& other) noexcept;
  SubgraphPtr& operator=(SubgraphPtr&& other) noexcept;
  ~SubgraphPtr();

  Graph* get() const { return graph_.get(); }
  Graph& operator*() const { return *graph_; }
  Graph* operator->() const { return graph_.get(); }
  bool operator==(std::nullptr_t) const { return graph_ == nullptr; }

 private:
  std::unique_ptr<Graph> graph_;
};

struct Attribute {
  enum class Kind { kInt, kFloat, kString, kTensor, kInts, kFloats, kStrings, kGraph };
  Kind kind = Kind::kInt;
  int64_t i = 0;
  float f = 0.0f;
  std::string s;
  Tensor t;
  std::vector<int64_t> ints;
  std::vector<float> floats;
  std::vector<std::string> strings;
  // kGraph: the subgraph and the node input feeding each of its captured inputs (see the file
  // comment).
  SubgraphPtr g;
  std::vector<int> captures;
};

class AttributeMap {
 public:
  bool Has(std::string_view name) const;
  const Attribute* Find(std::string_view name) const;
  Attribute* FindMutable(std::string_view name);

  int64_t GetInt(std::string_view name, int64_t default_value) const;
  float GetFloat(std::string_view name, float default_value) const;
  std::string GetString(std::string_view name, std::string_view default_value) const;
  // Empty when absent.
  std::span<const int64_t> GetInts(std::string_view name) const;
  std::span<const float> GetFloats(std::string_view name) const;
  std::span<const std::string> GetStrings(std::string_view name) const;
  // Null when absent.
  const Tensor* GetTensor(std::string_view name) const;
  // The subgraph attribute `name`, or null.
  const Attribute* GetGraph(std::string_view name) const;

  void SetInt(std::string_view name, int64_t value);
  void SetFloat(std::string_view name, float value);
  void SetString(std::string_view name, std::string_view value);
  void SetInts(std::string_view name, std::vector<int64_t> values);
  void SetFloats(std::string_view name, std::vector<float> values);
  void SetStrings(std::string_view name, std::vector<std::string> values);
  void SetTensor(std::string_view name, Tensor value);
  void Set(std::string_view name, Attribute value);
  void Erase(std::string_view name);

  const std::map<std::string, Attribute, std::less<>>& entries() const { return entries_; }

 private:
  std::map<std::string, Attribute, std::less<>> entries_;
};

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_IR_ATTRIBUTE_H_
