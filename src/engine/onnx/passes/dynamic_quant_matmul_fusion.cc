#include "engine/onnx/passes/dynamic_quant_matmul_fusion.h"

#include <string>

#include "engine/onnx/kernels/qlinear_dnnl.h"
#include "engine/onnx/passes/pass_util.h"

namespace brigade::engine::onnx {
namespace {

// The node at `index` of `graph`, or null for -1.
Node* NodeAt(Graph* graph, int index) {
  return index < 0 ? nullptr : &graph->nodes()[static_cast<size_t>(index)];
}

// The Mul's operand other than `one`, or kNoValue when `one` is not one of its two inputs.
ValueId OtherOperand(const Node& mul, ValueId one) {
  if (mul.inputs.size() != 2) return kNoValue;
  if (mul.inputs[0] == one) return mul.inputs[1];
  if (mul.inputs[1] == one) return mul.inputs[0];
  return kNoValue;
}

bool IsConstantOf(const Graph& graph, ValueId id, DataType type) {
  const Tensor* t = ConstantOf(graph, id);
  return t != nullptr && t->dtype() == type;
}

}  // namespace

absl::StatusOr<bool> DynamicQuantMatMulFusion::Run(Graph* graph) const {
  bool changed = false;
  const GraphIndex index(*graph);
  for (size_t i = 0; i < graph->nodes().size(); ++i) {
    Node& mm = graph->nodes()[i];
    if (mm.removed || !IsOp(mm, "MatMulInteger") || mm.inputs.size() < 3 || mm.has_input(3)) {
      continue;
    }
    // x_q and x_zp from one DynamicQuantizeLinear.
    Node* dql = NodeAt(graph, index.producer(mm.inputs[0]));
    if (dql == nullptr || !IsOp(*dql, "DynamicQuantizeLinear") || dql->outputs.size() < 3 ||
        dql->outputs[0] != mm.inputs[0] || dql->outputs[2] != mm.inputs[2]) {
      continue;
    }
    const ValueId w = mm.inputs[1];
    const Tensor* weights = ConstantOf(*graph, w);
    if (weights == nullptr || weights->dtype() != DataType::kInt8 || weights->shape().size() != 2 ||
        !DnnlInt8IsExactFor(DataType::kUint8, *weights)) {
      continue;
    }
    const int64_t n = weights->shape()[1];
    // MatMulInteger → Cast(float) → Mul(c, s), each read once.
    if (!index.HasSingleConsumer(mm.outputs[0])) continue;
    Node* cast = NodeAt(graph, index.consumers(mm.outputs[0])[0]);
    if (!IsOp(*cast, "Cast") || cast->attributes.GetInt("to", 0) != 1 ||
        !index.HasSingleConsumer(cast->outputs[0])) {
      continue;
    }
    Node* mul = NodeAt(graph, index.consumers(cast->outputs[0])[0]);
    if (!IsOp(*mul, "Mul")) continue;
    const ValueId s = OtherOperand(*mul, cast->outputs[0]);
    Node* scale = NodeAt(graph, s == kNoValue ? -1 : index.producer(s));
    if (scale == nullptr || !IsOp(*scale, "Mul")) continue;
    const ValueId w_scale = OtherOperand(*scale, dql->outputs[1]);
    if (w_scale == kNoValue || !IsConstantOf(*graph, w_scale, DataType::kFp32)) continue;
    const int64_t scales = ConstantOf(*graph, w_scale)->num_elements();
    if (scales != 1 && scales != n) continue;
    // An Add of a constant fp32 [N] bias, y's only reader, folds in too.
    ValueId out = mul->outputs[0];
    Node* add = nullptr;
    ValueId bias = kNoValue;
    if (index.HasSingleConsumer(out)) {
      Node* next = NodeAt(graph, index.consumers(out)[0]);
      const ValueId b = IsOp(*next, "Add") ? OtherOperand(*next, out) : kNoValue;
      const Tensor* bias_tensor = b == kNoValue ? nullptr : ConstantOf(*graph, b);
      if (bias_tensor != nullptr && bias_tensor->dtype() == DataType::kFp32 &&
          bias_tensor->shape() == Shape{n}) {
        add = next;
        bias = b;
      }
    }
    Node fused;
    fused.name = mm.name + "/DynamicQuantMatMul";
    fused.op_type = "DynamicQuantMatMul";
    fused.domain = std::string(kBrigadeDomain);
    fused.opset = 1;
    fused.inputs = {mm.inputs[0], dql->outputs[1], mm.inputs[2], w, w_scale};
    if (bias != kNoValue) fused.inputs.push_back(bias);
    fused.outputs = {add != nullptr ? add->outputs[0] : out};
    if (index.HasSingleConsumer(s)) scale->removed = true;
    cast->removed = true;
    mul->removed = true;
    if (add != nullptr) add->removed = true;
    mm = std::move(fused);
    changed = true;
  }
  graph->Compact();
  return changed;
}

}  // namespace brigade::engine::onnx
