#include "engine/onnx/passes/static_shapes.h"

#include <optional>
#include <vector>

#include "engine/onnx/exec/compiled_model.h"
#include "engine/onnx/exec/planner.h"

namespace brigade::engine::onnx {
namespace {

// Most bytes the probe inputs of one run may take together. The declared input shapes come from
// the model file: a model whose fixed inputs are larger keeps the shapes it declares.
constexpr size_t kMaxProbeBytes = size_t{256} << 20;

// Zero inputs with every variable dimension set to `size`; nullopt when an input's rank is
// unknown or the inputs would take more than kMaxProbeBytes.
std::optional<std::vector<Tensor>> ProbeInputs(const Graph& graph, int64_t size) {
  std::vector<Tensor> inputs;
  size_t budget = kMaxProbeBytes;
  for (ValueId id : graph.inputs()) {
    const Value& v = graph.value(id);
    if (!v.shape.has_value() || DataTypeSize(v.dtype) == 0) return std::nullopt;
    Shape shape = *v.shape;
    for (int64_t& d : shape) {
      if (d < 0) d = size;
    }
    auto elements = ElementCount(shape);
    if (!elements.ok() || static_cast<uint64_t>(*elements) > budget / DataTypeSize(v.dtype)) {
      return std::nullopt;
    }
    budget -= static_cast<size_t>(*elements) * DataTypeSize(v.dtype);
    auto t = Tensor::Zeros(v.dtype, shape);
    if (!t.ok()) return std::nullopt;
    inputs.push_back(*std::move(t));
  }
  return inputs;
}

std::optional<std::vector<std::optional<Shape>>> Probe(const Graph& graph, int64_t size) {
  auto inputs = ProbeInputs(graph, size);
  if (!inputs.has_value()) return std::nullopt;
  auto compiled = CompiledModel::Compile("static_shapes", graph);
  if (!compiled.ok()) return std::nullopt;
  auto shapes = PropagateShapes(**compiled, *inputs);
  if (!shapes.ok()) return std::nullopt;
  return *std::move(shapes);
}

}  // namespace

absl::StatusOr<bool> StaticShapes::Run(Graph* graph) const {
  // The probes' inputs are zeros: shapes computed from an input's contents (a Loop body's
  // iteration number slicing, a shape input) would come out static and wrong.
  for (bool deciding : ShapeDecidingInputs(*graph)) {
    if (deciding) return false;
  }
  const auto ones = Probe(*graph, 1);
  if (!ones.has_value()) return false;
  const auto twos = Probe(*graph, 2);
  if (!twos.has_value()) return false;
  bool changed = false;
  for (size_t i = 0; i < graph->num_values(); ++i) {
    const auto& a = (*ones)[i];
    const auto& b = (*twos)[i];
    if (!a.has_value() || !b.has_value() || a->size() != b->size()) continue;
    Shape merged = *a;
    for (size_t d = 0; d < merged.size(); ++d) {
      if ((*a)[d] != (*b)[d]) merged[d] = -1;
    }
    Value& v = graph->value(static_cast<ValueId>(i));
    if (!v.shape.has_value() || *v.shape != merged) {
      v.shape = std::move(merged);
      changed = true;
    }
  }
  return changed;
}

}  // namespace brigade::engine::onnx
