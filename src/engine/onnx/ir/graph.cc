#include "engine/onnx/ir/graph.h"

#include <algorithm>
#include <queue>
#include <utility>

#include "core/strings.h"

namespace brigade::engine::onnx {

ValueId Graph::AddValue(Value value) {
  const auto id = static_cast<ValueId>(values_.size());
  if (!value.name.empty()) names_.emplace(value.name, id);
  values_.push_back(std::move(value));
  return id;
}

ValueId Graph::AddConstant(std::string_view name_hint, Tensor tensor) {
  Value value;
  value.name = UniqueName(name_hint);
  value.dtype = tensor.dtype();
  value.shape = tensor.shape();
  value.constant = std::move(tensor);
  return AddValue(std::move(value));
}

ValueId Graph::AddIntermediate(std::string_view name_hint, DataType dtype,
                               std::optional<Shape> shape) {
  Value value;
  value.name = UniqueName(name_hint);
  value.dtype = dtype;
  value.shape = std::move(shape);
  return AddValue(std::move(value));
}

ValueId Graph::FindValue(std::string_view name) const {
  auto it = names_.find(name);
  return it == names_.end() ? kNoValue : it->second;
}

int Graph::opset(std::string_view domain) const {
  auto it = opsets_.find(std::string(domain));
  return it == opsets_.end() ? 0 : it->second;
}

std::string Graph::UniqueName(std::string_view hint) {
  std::string name(hint);
  while (name.empty() || names_.contains(name)) {
    name = StrCat(hint, "__", name_counter_++);
  }
  return name;
}

bool Graph::IsGraphOutput(ValueId id) const {
  return std::find(outputs_.begin(), outputs_.end(), id) != outputs_.end();
}

bool Graph::IsGraphInput(ValueId id) const {
  return std::find(inputs_.begin(), inputs_.end(), id) != inputs_.end();
}

void Graph::ReplaceAllUses(ValueId from, ValueId to) {
  for (Node& node : nodes_) {
    if (node.removed) continue;
    for (ValueId& input : node.inputs) {
      if (input == from) input = to;
    }
  }
  for (ValueId& output : outputs_) {
    if (output == from) output = to;
  }
}

void Graph::Compact() {
  std::erase_if(nodes_, [](const Node& node) { return node.removed; });
  std::vector<bool> used(values_.size(), false);
  for (const Node& node : nodes_) {
    for (ValueId input : node.inputs) {
      if (input != kNoValue) used[static_cast<size_t>(input)] = true;
    }
  }
  for (ValueId output : outputs_) used[static_cast<size_t>(output)] = true;
  for (size_t i = 0; i < values_.size(); ++i) {
    if (!used[i] && values_[i].constant.has_value()) values_[i].constant.reset();
  }
}

absl::Status Graph::SortTopologically() {
  // Kahn's algorithm over live nodes; a min-heap on the original position keeps the existing
  // order wherever the dependencies allow, so a sorted graph is left untouched.
  const size_t n = nodes_.size();
  std::vector<int> producer(values_.size(), -1);
  for (size_t i = 0; i < n; ++i) {
    if (nodes_[i].removed) continue;
    for (ValueId output : nodes_[i].outputs) {
      if (output != kNoValue) producer[static_cast<size_t>(output)] = static_cast<int>(i);
    }
  }
  std::vector<int> pending(n, 0);
  std::vector<std::vector<int>> dependents(n);
  for (size_t i = 0; i < n; ++i) {
    if (nodes_[i].removed) continue;
    for (ValueId input : nodes_[i].inputs) {
      if (input == kNoValue) continue;
      const int p = producer[static_cast<size_t>(input)];
      if (p < 0) {
        const Value& v = values_[static_cast<size_t>(input)];
        if (!v.is_constant() && !IsGraphInput(input)) {
          return absl::InvalidArgumentError(StrCat("node '", nodes_[i].name, "' (",
                                                   nodes_[i].op_type, "): input '", v.name,
                                                   "' is not produced by any node"));
        }
        continue;
      }
      ++pending[i];
      dependents[static_cast<size_t>(p)].push_back(static_cast<int>(i));
    }
  }
  std::priority_queue<int, std::vector<int>, std::greater<>> ready;
  size_t live = 0;
  for (size_t i = 0; i < n; ++i) {
    if (nodes_[i].removed) continue;
    ++live;
    if (pending[i] == 0) ready.push(static_cast<int>(i));
  }
  std::vector<int> order;
  order.reserve(live);
  while (!ready.empty()) {
    const int i = ready.top();
    ready.pop();
    for (int d : dependents[static_cast<size_t>(i)]) {
      if (--pending[static_cast<size_t>(d)] == 0) ready.push(d);
    }
    order.push_back(i);
  }
  if (order.size() != live) {
    for (size_t i = 0; i < n; ++i) {
      if (!nodes_[i].removed && pending[i] > 0) {
        return absl::InvalidArgumentError(StrCat("node '", nodes_[i].name, "' (", nodes_[i].op_type,
                                                 ") is on a cycle: the graph is not a DAG"));
      }
    }
  }
  std::vector<Node> sorted;
  sorted.reserve(live);
  for (int i : order) sorted.push_back(std::move(nodes_[static_cast<size_t>(i)]));
  nodes_ = std::move(sorted);
  return absl::OkStatus();
}

size_t Graph::live_node_count() const {
  return static_cast<size_t>(
      std::count_if(nodes_.begin(), nodes_.end(), [](const Node& n) { return !n.removed; }));
}

std::vector<Attribute*> Subgraphs(Node& node) {
  std::vector<Attribute*> graphs;
  for (const auto& [name, attribute] : node.attributes.entries()) {
    if (attribute.kind == Attribute::Kind::kGraph && attribute.g != nullptr) {
      graphs.push_back(node.attributes.FindMutable(name));
    }
  }
  return graphs;
}

std::vector<const Attribute*> Subgraphs(const Node& node) {
  std::vector<const Attribute*> graphs;
  for (const auto& [name, attribute] : node.attributes.entries()) {
    if (attribute.kind == Attribute::Kind::kGraph && attribute.g != nullptr) {
      graphs.push_back(&attribute);
    }
  }
  return graphs;
}

GraphIndex::GraphIndex(const Graph& graph)
    : graph_(graph), producers_(graph.num_values(), -1), consumers_(graph.num_values()) {
  const auto& nodes = graph.nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].removed) continue;
    for (ValueId output : nodes[i].outputs) {
      if (output != kNoValue) producers_[static_cast<size_t>(output)] = static_cast<int>(i);
    }
    for (ValueId input : nodes[i].inputs) {
      if (input == kNoValue) continue;
      auto& list = consumers_[static_cast<size_t>(input)];
      if (list.empty() || list.back() != static_cast<int>(i)) list.push_back(static_cast<int>(i));
    }
  }
}

bool GraphIndex::HasSingleConsumer(ValueId id) const {
  return consumers(id).size() == 1 && !graph_.IsGraphOutput(id);
}

}  // namespace brigade::engine::onnx
