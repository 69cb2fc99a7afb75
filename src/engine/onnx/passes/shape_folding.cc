#include "engine/onnx/passes/shape_folding.h"

#include <span>
#include <vector>

#include "engine/onnx/passes/pass_util.h"

namespace brigade::engine::onnx {
namespace {

// Dims [start, end) of a Shape node's output, with -1 for unknown ones.
std::optional<std::vector<int64_t>> ShapeOutput(const Graph& graph, const Node& node) {
  const Value& in = graph.value(node.inputs[0]);
  if (!in.shape.has_value()) return std::nullopt;
  const auto rank = static_cast<int64_t>(in.shape->size());
  int64_t start = node.attributes.GetInt("start", 0);
  int64_t end = node.attributes.GetInt("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
  std::vector<int64_t> dims;
  for (int64_t i = start; i < end; ++i) dims.push_back((*in.shape)[static_cast<size_t>(i)]);
  return dims;
}

bool AllKnown(std::span<const int64_t> dims) {
  for (int64_t d : dims) {
    if (d < 0) return false;
  }
  return true;
}

void MakeConstant(Graph* graph, ValueId id, std::vector<int64_t> values, Shape shape) {
  Value& v = graph->value(id);
  auto t = Tensor::FromValues<int64_t>(std::move(shape), values);
  if (!t.ok()) return;
  v.dtype = DataType::kInt64;
  v.shape = t->shape();
  v.constant = *std::move(t);
}

}  // namespace

absl::StatusOr<bool> ShapeFolding::Run(Graph* graph) const {
  bool changed = false;
  const GraphIndex index(*graph);
  auto& nodes = graph->nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    Node& node = nodes[i];
    if (node.removed || node.inputs.empty() || node.inputs[0] == kNoValue) continue;
    if (IsOp(node, "Size")) {
      const Value& in = graph->value(node.inputs[0]);
      if (!in.shape.has_value() || !AllKnown(*in.shape)) continue;
      int64_t n = 1;
      for (int64_t d : *in.shape) n *= d;
      MakeConstant(graph, node.outputs[0], {n}, Shape{});
      node.removed = true;
      changed = true;
      continue;
    }
    if (!IsOp(node, "Shape")) continue;
    const auto dims = ShapeOutput(*graph, node);
    if (!dims.has_value()) continue;
    if (AllKnown(*dims)) {
      MakeConstant(graph, node.outputs[0], *dims, Shape{static_cast<int64_t>(dims->size())});
      node.removed = true;
      changed = true;
      continue;
    }
    // Partially known: fold Gathers of known dims out of it.
    for (int reader : index.consumers(node.outputs[0])) {
      Node& gather = nodes[static_cast<size_t>(reader)];
      if (!IsOp(gather, "Gather") || gather.inputs[0] != node.outputs[0] ||
          gather.attributes.GetInt("axis", 0) != 0) {
        continue;
      }
      const Tensor* idx = ConstantOf(*graph, gather.input(1));
      if (idx == nullptr ||
          (idx->dtype() != DataType::kInt64 && idx->dtype() != DataType::kInt32)) {
        continue;
      }
      std::vector<int64_t> picked;
      bool known = true;
      for (int64_t k = 0; k < idx->num_elements(); ++k) {
        int64_t j = idx->dtype() == DataType::kInt64 ? idx->values<int64_t>()[k]
                                                     : idx->values<int32_t>()[k];
        if (j < 0) j += static_cast<int64_t>(dims->size());
        if (j < 0 || j >= static_cast<int64_t>(dims->size()) ||
            (*dims)[static_cast<size_t>(j)] < 0) {
          known = false;
          break;
        }
        picked.push_back((*dims)[static_cast<size_t>(j)]);
      }
      if (!known) continue;
      MakeConstant(graph, gather.outputs[0], std::move(picked), idx->shape());
      gather.removed = true;
      changed = true;
    }
  }
  graph->Compact();
  return changed;
}

}  // namespace brigade::engine::onnx
