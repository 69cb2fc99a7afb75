#include "engine/onnx/passes/qdq_fusion.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>
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

// A Clip's bounds when they are constants (absent: unbounded on that side), else nullopt.
std::optional<std::pair<float, float>> ClipBounds(const Graph& graph, const Node& clip) {
  std::pair<float, float> bounds{-std::numeric_limits<float>::max(),
                                 std::numeric_limits<float>::max()};
  for (size_t i = 1; i <= 2; ++i) {
    if (!clip.has_input(i)) continue;
    const std::optional<double> bound = ScalarConstant(graph, clip.inputs[i]);
    if (!bound.has_value()) return std::nullopt;
    (i == 1 ? bounds.first : bounds.second) = static_cast<float>(*bound);
  }
  return bounds;
}

// What reads a node's single output: an optional Relu (or Clip, when `clip`), then a
// QuantizeLinear, each the sole reader of what it reads.
struct QuantizedOutput {
  Node* activation = nullptr;  // the Relu or Clip, or null
  Node* quantize = nullptr;
};

std::optional<QuantizedOutput> QuantizedOutputOf(Graph* graph, const GraphIndex& index,
                                                 const Node& node, bool clip) {
  if (node.outputs.size() != 1 || !index.HasSingleConsumer(node.outputs[0])) return std::nullopt;
  QuantizedOutput tail;
  ValueId value = node.outputs[0];
  Node* next = &graph->nodes()[static_cast<size_t>(index.consumers(value)[0])];
  if (IsOp(*next, "Relu") || (clip && IsOp(*next, "Clip"))) {
    if (next->input(0) != value || next->outputs.size() != 1 ||
        !index.HasSingleConsumer(next->outputs[0])) {
      return std::nullopt;
    }
    tail.activation = next;
    value = next->outputs[0];
    next = &graph->nodes()[static_cast<size_t>(index.consumers(value)[0])];
  }
  if (!IsOp(*next, "QuantizeLinear") || next->outputs.size() != 1 || next->input(0) != value) {
    return std::nullopt;
  }
  tail.quantize = next;
  return tail;
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
  // Output: [Relu | Clip →] QuantizeLinear, each the sole reader.
  const std::optional<QuantizedOutput> tail = QuantizedOutputOf(graph, index, op, /*clip=*/true);
  if (!tail) return false;
  Node* activation = tail->activation;
  Node* next = tail->quantize;
  std::optional<std::pair<float, float>> clip;
  if (activation != nullptr && IsOp(*activation, "Clip")) {
    clip = ClipBounds(*graph, *activation);
    if (!clip) return false;
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
  if (clip) {
    // oneDNN applies an int8 primitive's post-ops after its output scales, in units of y_scale
    // (before y's zero point): the bounds go there too. Relu is the same in any unit.
    AppendPostOp(&fused, "Clip", clip->first / y->scales[0], clip->second / y->scales[0]);
    activation->removed = true;
  } else if (activation != nullptr) {
    AppendPostOp(&fused, "Relu", 0, 0);
    activation->removed = true;
  }
  next->removed = true;
  op = std::move(fused);
  return true;
}

// Two per-tensor quantization parameter sets with equal constant scales and zero points.
bool SameQuantization(const Graph& graph, ValueId scale_a, ValueId zp_a, ValueId scale_b,
                      ValueId zp_b) {
  auto same = [&](ValueId a, ValueId b) {
    if (a == b) return true;
    const Tensor* ta = ConstantOf(graph, a);
    const Tensor* tb = ConstantOf(graph, b);
    return ta != nullptr && tb != nullptr && ta->dtype() == tb->dtype() &&
           ta->num_elements() == 1 && tb->num_elements() == 1 &&
           std::memcmp(ta->data(), tb->data(), DataTypeSize(ta->dtype())) == 0;
  };
  return same(scale_a, scale_b) && zp_a != kNoValue && zp_b != kNoValue && same(zp_a, zp_b);
}

// QLinearConv / QLinearMatMul → DequantizeLinear → Clip → QuantizeLinear, the dequantize and
// quantize with the op's own output scale and zero point (what a quantizer that has no int8
// Clip writes around MobileNet's ReLU6): the Clip becomes a post-op of the op, in its output's
// integer units. Exact: with one scale s and zero point z, Q(Clip(DQ(q), lo, hi)) is q clamped
// to [Q(lo), Q(hi)] (Q is monotonic and Q(DQ(q)) = q), and oneDNN rounds after its post-ops, so
// a clamp to the integers Q(lo) - z and Q(hi) - z before rounding clamps the rounded value.
bool FuseQuantizedClip(Graph* graph, const GraphIndex& index, Node& op) {
  const bool conv = op.op_type == "QLinearConv";
  if (!op.domain.empty() || (!conv && op.op_type != "QLinearMatMul") || op.inputs.size() < 8 ||
      op.outputs.size() != 1 || !index.HasSingleConsumer(op.outputs[0])) {
    return false;
  }
  Node& dq = graph->nodes()[static_cast<size_t>(index.consumers(op.outputs[0])[0])];
  if (!IsOp(dq, "DequantizeLinear") || dq.inputs.size() < 3 || dq.outputs.size() != 1 ||
      !index.HasSingleConsumer(dq.outputs[0])) {
    return false;
  }
  Node& clip = graph->nodes()[static_cast<size_t>(index.consumers(dq.outputs[0])[0])];
  if (!IsOp(clip, "Clip") || clip.input(0) != dq.outputs[0] || clip.outputs.size() != 1 ||
      !index.HasSingleConsumer(clip.outputs[0])) {
    return false;
  }
  const auto bounds = ClipBounds(*graph, clip);
  if (!bounds) return false;
  Node& q = graph->nodes()[static_cast<size_t>(index.consumers(clip.outputs[0])[0])];
  if (!IsOp(q, "QuantizeLinear") || q.inputs.size() < 3 || q.outputs.size() != 1 ||
      q.inputs[0] != clip.outputs[0]) {
    return false;
  }
  const ValueId y_scale = op.inputs[6], y_zp = op.inputs[7];
  if (!SameQuantization(*graph, y_scale, y_zp, dq.inputs[1], dq.inputs[2]) ||
      !SameQuantization(*graph, y_scale, y_zp, q.inputs[1], q.inputs[2])) {
    return false;
  }
  const std::optional<double> scale = ScalarConstant(*graph, y_scale);
  const Tensor* zp = ConstantOf(*graph, y_zp);
  if (!scale || !(*scale > 0) || zp == nullptr) return false;
  const bool u8 = zp->dtype() == DataType::kUint8;
  const int zero = u8 ? zp->values<uint8_t>()[0] : zp->values<int8_t>()[0];
  const float lowest = u8 ? 0.0f : -128.0f, highest = u8 ? 255.0f : 127.0f;
  // Q(bound) - zero, in the float arithmetic QuantizeLinear uses, within the type's range.
  auto integer_bound = [&](float bound) {
    const float v = std::nearbyint(bound / static_cast<float>(*scale)) + static_cast<float>(zero);
    return std::clamp(v, lowest, highest) - static_cast<float>(zero);
  };
  AppendPostOp(&op, "Clip", integer_bound(bounds->first), integer_bound(bounds->second));
  op.outputs[0] = q.outputs[0];
  dq.removed = true;
  clip.removed = true;
  q.removed = true;
  return true;
}

// Add(DequantizeLinear(a), DequantizeLinear(b)) → [Relu] → QuantizeLinear ⇒ QLinearAdd, when
// everything is per-tensor and constant, a and b have one 8-bit type and one static shape, and
// the output has their type. The DequantizeLinear nodes stay for their other readers, if any.
bool FuseQdqAdd(Graph* graph, const GraphIndex& index, Node& add) {
  if (!IsOp(add, "Add") || add.inputs.size() != 2 || add.outputs.size() != 1) return false;
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
  const std::optional<QuantizedOutput> tail = QuantizedOutputOf(graph, index, add, /*clip=*/false);
  if (!tail) return false;
  Node* relu = tail->activation;
  Node* next = tail->quantize;
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
      if (!node.removed && (FuseQdqAround(graph, index, node) || FuseQdqAdd(graph, index, node) ||
                            FuseQuantizedClip(graph, index, node))) {
        progress = changed = true;
        break;  // the index is stale
      }
    }
    graph->Compact();
  }
  return changed;
}

}  // namespace brigade::engine::onnx
