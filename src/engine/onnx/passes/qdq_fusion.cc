#include "engine/onnx/passes/qdq_fusion.h"

#include <cmath>
#include <optional>
#include <vector>

#include "core/strings.h"
#include "engine/onnx/kernels/post_ops.h"
#include "engine/onnx/kernels/qlinear_dnnl.h"
#include "engine/onnx/passes/pass_util.h"

namespace brigade::engine::onnx {
namespace {

bool IsEightBitInteger(DataType t) { return t == DataType::kUint8 || t == DataType::kInt8; }

// A DequantizeLinear (or QuantizeLinear) with constant scale and zero point.
struct QuantParams {
  ValueId data = kNoValue;  // the quantized (DQ) or real (Q) input
  ValueId scale = kNoValue;
  ValueId zero_point = kNoValue;
  std::vector<float> scales;
  int64_t axis = 1;
};

std::optional<QuantParams> ParamsOf(const Graph& graph, const Node& node) {
  if (node.inputs.size() < 2) return std::nullopt;
  QuantParams p;
  p.data = node.inputs[0];
  p.scale = node.inputs[1];
  p.zero_point = node.input(2);
  p.axis = node.attributes.GetInt("axis", 1);
  const Tensor* scale = ConstantOf(graph, p.scale);
  if (scale == nullptr || scale->dtype() != DataType::kFp32) return std::nullopt;
  p.scales.assign(scale->values<float>().begin(), scale->values<float>().end());
  for (float s : p.scales) {
    if (!(s > 0)) return std::nullopt;
  }
  if (p.zero_point != kNoValue && ConstantOf(graph, p.zero_point) == nullptr) return std::nullopt;
  return p;
}

// All zero-point values of `p` equal `want` (absent zero point counts as 0).
bool ZeroPointIs(const Graph& graph, const QuantParams& p, int want) {
  if (p.zero_point == kNoValue) return want == 0;
  const Tensor* zp = ConstantOf(graph, p.zero_point);
  for (int64_t i = 0; i < zp->num_elements(); ++i) {
    const int v =
        zp->dtype() == DataType::kInt8 ? zp->values<int8_t>()[i] : zp->values<uint8_t>()[i];
    if (v != want) return false;
  }
  return true;
}

Node* ProducerOp(Graph* graph, const GraphIndex& index, ValueId id, std::string_view op) {
  if (id == kNoValue) return nullptr;
  const int p = index.producer(id);
  if (p < 0) return nullptr;
  Node& node = graph->nodes()[static_cast<size_t>(p)];
  return IsOp(node, op) ? &node : nullptr;
}

// A zero point constant of `type` (the QLinear ops need explicit ones).
ValueId ZeroPointConstant(Graph* graph, const std::string& name, DataType type) {
  Tensor t = *Tensor::Zeros(type, Shape{});
  return graph->AddConstant(name, std::move(t));
}

// The weights, as s8 (u8 with zero point 128 shifted), are within [-64, 64].
bool SevenBitWeights(const Tensor& wq) {
  if (wq.dtype() == DataType::kInt8) return WeightsFitSevenBits(wq);
  for (uint8_t v : wq.values<uint8_t>()) {
    if (v < 128 - 64 || v > 128 + 64) return false;
  }
  return true;
}

bool FuseQdqAround(Graph* graph, const GraphIndex& index, Node& op) {
  const bool conv = IsOp(op, "Conv");
  if (!conv && !IsOp(op, "MatMul")) return false;
  Node* dq_x = ProducerOp(graph, index, op.input(0), "DequantizeLinear");
  Node* dq_w = ProducerOp(graph, index, op.input(1), "DequantizeLinear");
  if (dq_x == nullptr || dq_w == nullptr) return false;
  const auto x = ParamsOf(*graph, *dq_x);
  const auto w = ParamsOf(*graph, *dq_w);
  if (!x || !w || x->scales.size() != 1) return false;
  const Value& xv = graph->value(x->data);
  const Tensor* wq = ConstantOf(*graph, w->data);
  if (!IsEightBitInteger(xv.dtype) || wq == nullptr || !IsEightBitInteger(wq->dtype())) {
    return false;
  }
  if (!ZeroPointIs(*graph, *w, wq->dtype() == DataType::kInt8 ? 0 : 128)) return false;
  if (!DnnlInt8IsExact() && (xv.dtype != DataType::kUint8 || !SevenBitWeights(*wq))) return false;
  const Shape& ws = wq->shape();
  if (conv ? ws.size() < 3 : ws.size() != 2) return false;
  const int64_t channels = conv ? ws[0] : ws[1];
  if (w->scales.size() != 1) {
    if (static_cast<int64_t>(w->scales.size()) != channels) return false;
    const int64_t axis = w->axis < 0 ? w->axis + static_cast<int64_t>(ws.size()) : w->axis;
    if (axis != (conv ? 0 : 1)) return false;
  }
  // Output: [Relu →] QuantizeLinear, each the sole reader.
  ValueId out = op.outputs[0];
  if (!index.HasSingleConsumer(out)) return false;
  Node* next = &graph->nodes()[static_cast<size_t>(index.consumers(out)[0])];
  Node* relu = nullptr;
  if (IsOp(*next, "Relu")) {
    relu = next;
    if (!index.HasSingleConsumer(relu->outputs[0])) return false;
    next = &graph->nodes()[static_cast<size_t>(index.consumers(relu->outputs[0])[0])];
  }
  if (!IsOp(*next, "QuantizeLinear") || next->inputs[0] != (relu ? relu->outputs[0] : out)) {
    return false;
  }
  const auto y = ParamsOf(*graph, *next);
  if (!y || y->scales.size() != 1) return false;
  const DataType y_type =
      y->zero_point != kNoValue ? graph->value(y->zero_point).dtype : DataType::kUint8;
  if (!IsEightBitInteger(y_type)) return false;
  // Bias: an fp32 constant (or a DequantizeLinear of one) requantized to int32.
  ValueId bias_q = kNoValue;
  if (conv && op.has_input(2)) {
    std::vector<float> b;
    if (const Tensor* bf = ConstantOf(*graph, op.inputs[2]);
        bf != nullptr && bf->dtype() == DataType::kFp32) {
      b.assign(bf->values<float>().begin(), bf->values<float>().end());
    } else if (Node* dq_b = ProducerOp(graph, index, op.inputs[2], "DequantizeLinear")) {
      const auto bp = ParamsOf(*graph, *dq_b);
      const Tensor* bi = bp ? ConstantOf(*graph, bp->data) : nullptr;
      if (bi == nullptr || bi->dtype() != DataType::kInt32 || !ZeroPointIs(*graph, *bp, 0)) {
        return false;
      }
      for (int64_t i = 0; i < bi->num_elements(); ++i) {
        const float s = bp->scales[bp->scales.size() == 1 ? 0 : static_cast<size_t>(i)];
        b.push_back(static_cast<float>(bi->values<int32_t>()[i]) * s);
      }
    } else {
      return false;
    }
    if (static_cast<int64_t>(b.size()) != channels) return false;
    Tensor q = *Tensor::Allocate(DataType::kInt32, Shape{channels});
    for (int64_t c = 0; c < channels; ++c) {
      const double s = static_cast<double>(x->scales[0]) *
                       w->scales[w->scales.size() == 1 ? 0 : static_cast<size_t>(c)];
      q.mutable_values<int32_t>()[c] =
          static_cast<int32_t>(std::nearbyint(static_cast<double>(b[static_cast<size_t>(c)]) / s));
    }
    bias_q = graph->AddConstant(StrCat(op.name, "/bias_q"), std::move(q));
  }
  Node fused;
  fused.name = op.name + "/qlinear";
  fused.op_type = conv ? "QLinearConv" : "QLinearMatMul";
  fused.opset = op.opset;
  const ValueId x_zp = x->zero_point != kNoValue
                           ? x->zero_point
                           : ZeroPointConstant(graph, StrCat(op.name, "/x_zp"), xv.dtype);
  const ValueId w_zp = w->zero_point != kNoValue
                           ? w->zero_point
                           : ZeroPointConstant(graph, StrCat(op.name, "/w_zp"), wq->dtype());
  const ValueId y_zp = y->zero_point != kNoValue
                           ? y->zero_point
                           : ZeroPointConstant(graph, StrCat(op.name, "/y_zp"), y_type);
  fused.inputs = {x->data, x->scale, x_zp, w->data, w->scale, w_zp, y->scale, y_zp};
  if (bias_q != kNoValue) fused.inputs.push_back(bias_q);
  fused.outputs = {next->outputs[0]};
  if (conv) {
    for (const char* attr : {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"}) {
      if (const Attribute* a = op.attributes.Find(attr)) fused.attributes.Set(attr, *a);
    }
  }
  if (relu != nullptr) {
    AppendPostOp(&fused, "Relu", 0, 0);
    relu->removed = true;
  }
  next->removed = true;
  op = std::move(fused);
  return true;
}

// Add(DequantizeLinear(a), DequantizeLinear(b)) → [Relu] → QuantizeLinear ⇒ QLinearAdd, when
// everything is per-tensor and constant, a and b have one 8-bit type and one static shape, and
// the output has their type. The DequantizeLinear nodes stay for their other readers, if any.
bool FuseQdqAdd(Graph* graph, const GraphIndex& index, Node& add) {
  if (!IsOp(add, "Add") || add.inputs.size() != 2) return false;
  Node* dq_a = ProducerOp(graph, index, add.inputs[0], "DequantizeLinear");
  Node* dq_b = ProducerOp(graph, index, add.inputs[1], "DequantizeLinear");
  if (dq_a == nullptr || dq_b == nullptr) return false;
  const auto a = ParamsOf(*graph, *dq_a);
  const auto b = ParamsOf(*graph, *dq_b);
  if (!a || !b || a->scales.size() != 1 || b->scales.size() != 1) return false;
  const Value& av = graph->value(a->data);
  const Value& bv = graph->value(b->data);
  if (!IsEightBitInteger(av.dtype) || bv.dtype != av.dtype || !av.shape || !bv.shape ||
      *av.shape != *bv.shape) {
    return false;
  }
  ValueId out = add.outputs[0];
  if (!index.HasSingleConsumer(out)) return false;
  Node* next = &graph->nodes()[static_cast<size_t>(index.consumers(out)[0])];
  Node* relu = nullptr;
  if (IsOp(*next, "Relu")) {
    relu = next;
    if (!index.HasSingleConsumer(relu->outputs[0])) return false;
    next = &graph->nodes()[static_cast<size_t>(index.consumers(relu->outputs[0])[0])];
  }
  if (!IsOp(*next, "QuantizeLinear") || next->inputs[0] != (relu ? relu->outputs[0] : out)) {
    return false;
  }
  const auto c = ParamsOf(*graph, *next);
  if (!c || c->scales.size() != 1) return false;
  const DataType c_type =
      c->zero_point != kNoValue ? graph->value(c->zero_point).dtype : DataType::kUint8;
  if (c_type != av.dtype) return false;
  auto zero_point = [&](const QuantParams& p, const std::string& name) {
    return p.zero_point != kNoValue ? p.zero_point
                                    : ZeroPointConstant(graph, StrCat(add.name, name), av.dtype);
  };
  Node fused;
  fused.name = add.name + "/qlinear";
  fused.domain = std::string(kBrigadeDomain);
  fused.op_type = "QLinearAdd";
  fused.opset = 1;
  fused.inputs = {a->data,
                  a->scale,
                  zero_point(*a, "/a_zp"),
                  b->data,
                  b->scale,
                  zero_point(*b, "/b_zp"),
                  c->scale,
                  zero_point(*c, "/c_zp")};
  fused.outputs = {next->outputs[0]};
  if (relu != nullptr) {
    AppendPostOp(&fused, "Relu", 0, 0);
    relu->removed = true;
  }
  next->removed = true;
  add = std::move(fused);
  return true;
}

}  // namespace

absl::StatusOr<bool> QdqFusion::Run(Graph* graph) const {
  bool changed = false;
  bool progress = true;
  while (progress) {
    progress = false;
    const GraphIndex index(*graph);
    for (Node& node : graph->nodes()) {
      if (!node.removed && (FuseQdqAround(graph, index, node) || FuseQdqAdd(graph, index, node))) {
        progress = changed = true;
        break;  // the index is stale
      }
    }
    graph->Compact();
  }
  return changed;
}

}  // namespace brigade::engine::onnx
