#include "engine/onnx/passes/batchnorm_folding.h"

#include <cmath>
#include <vector>

#include "core/strings.h"
#include "engine/onnx/passes/pass_util.h"

namespace brigade::engine::onnx {
namespace {

const Tensor* FloatConstant(const Graph& graph, ValueId id, int64_t count) {
  const Tensor* t = ConstantOf(graph, id);
  if (t == nullptr || t->dtype() != DataType::kFp32 || t->num_elements() != count) return nullptr;
  return t;
}

}  // namespace

absl::StatusOr<bool> BatchNormFolding::Run(Graph* graph) const {
  bool changed = false;
  const GraphIndex index(*graph);
  auto& nodes = graph->nodes();
  for (Node& bn : nodes) {
    if (!IsOp(bn, "BatchNormalization") || bn.inputs.size() < 5) continue;
    if (bn.attributes.GetInt("training_mode", 0) != 0) continue;
    if (bn.outputs.size() > 1) {
      bool extra = false;
      for (size_t k = 1; k < bn.outputs.size(); ++k) extra |= bn.outputs[k] != kNoValue;
      if (extra) continue;
    }
    const int p = index.producer(bn.inputs[0]);
    if (p < 0 || !index.HasSingleConsumer(bn.inputs[0])) continue;
    Node& conv = nodes[static_cast<size_t>(p)];
    if (!IsOp(conv, "Conv")) continue;
    const Tensor* w = ConstantOf(*graph, conv.input(1));
    if (w == nullptr || w->dtype() != DataType::kFp32 || w->shape().size() < 3) continue;
    const int64_t m = w->shape()[0];
    const Tensor* gamma = FloatConstant(*graph, bn.inputs[1], m);
    const Tensor* beta = FloatConstant(*graph, bn.inputs[2], m);
    const Tensor* mean = FloatConstant(*graph, bn.inputs[3], m);
    const Tensor* var = FloatConstant(*graph, bn.inputs[4], m);
    const Tensor* bias = conv.has_input(2) ? FloatConstant(*graph, conv.inputs[2], m) : nullptr;
    if (!gamma || !beta || !mean || !var || (conv.has_input(2) && bias == nullptr)) continue;
    const double eps = bn.attributes.GetFloat("epsilon", 1e-5f);

    auto new_w = w->Clone();
    auto new_b = Tensor::Allocate(DataType::kFp32, Shape{m});
    if (!new_w.ok() || !new_b.ok()) continue;
    const int64_t per_channel = w->num_elements() / m;
    auto wv = new_w->mutable_values<float>();
    auto bv = new_b->mutable_values<float>();
    for (int64_t c = 0; c < m; ++c) {
      const double a = gamma->values<float>()[c] / std::sqrt(var->values<float>()[c] + eps);
      for (int64_t k = 0; k < per_channel; ++k) {
        wv[c * per_channel + k] = static_cast<float>(wv[c * per_channel + k] * a);
      }
      const double b0 = bias != nullptr ? bias->values<float>()[c] : 0.0;
      bv[c] = static_cast<float>((b0 - mean->values<float>()[c]) * a + beta->values<float>()[c]);
    }
    const ValueId w_id = graph->AddConstant(StrCat(conv.name, "/W_bn"), *std::move(new_w));
    const ValueId b_id = graph->AddConstant(StrCat(conv.name, "/B_bn"), *std::move(new_b));
    conv.inputs.resize(3, kNoValue);
    conv.inputs[1] = w_id;
    conv.inputs[2] = b_id;
    // The Conv now produces the BatchNormalization's output directly.
    graph->value(bn.outputs[0]).shape = graph->value(conv.outputs[0]).shape;
    conv.outputs[0] = bn.outputs[0];
    bn.removed = true;
    changed = true;
  }
  graph->Compact();
  return changed;
}

}  // namespace brigade::engine::onnx
