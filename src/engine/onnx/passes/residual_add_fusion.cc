#include "engine/onnx/passes/residual_add_fusion.h"

#include "engine/onnx/kernels/post_ops.h"
#include "engine/onnx/passes/pass_util.h"

namespace brigade::engine::onnx {
namespace {

bool IsFused(const Node& node) {
  return !node.removed && node.domain == kBrigadeDomain &&
         (node.op_type == "FusedConv" || node.op_type == "FusedMatMul");
}

// True when `other` (static shape) is safe to add to `out` as a post-op. Unknown dims (-1) are
// accepted only in the leading (batch) position and only when both sides have one there.
bool Compatible(const Value& out, const Value& other, bool conv) {
  if (!out.shape.has_value() || !other.shape.has_value()) return false;
  if (other.dtype != DataType::kFp32) return false;
  const Shape& o = *out.shape;
  const Shape& r = *other.shape;
  if (r.size() > o.size()) return false;
  const size_t offset = o.size() - r.size();
  bool full = r.size() == o.size();
  for (size_t d = 0; d < r.size(); ++d) {
    const int64_t od = o[d + offset], rd = r[d];
    if (od < 0 || rd < 0) {
      if (!(d + offset == 0 && od < 0 && rd < 0)) return false;
      continue;
    }
    if (rd != od) {
      full = false;
      if (rd != 1) return false;
    }
  }
  if (!conv) return true;
  if (full) return true;
  // Per-channel ([C,1,1] or [1,C,1,1]) is the only partial broadcast convolutions take.
  for (size_t d = 0; d < r.size(); ++d) {
    if (d + offset != 1 && r[d] != 1) return false;
  }
  return true;
}

// Fuses one Add into its producer; returns whether it did.
bool FuseResidualAdd(Graph* graph, const GraphIndex& index, Node& add) {
  auto& nodes = graph->nodes();
  // Candidates: operands produced by a fused node that feeds only this Add; prefer the one
  // later in the order (its other operand is then already computed).
  int best = -1;
  size_t best_operand = 0;
  for (size_t k = 0; k < 2; ++k) {
    const ValueId v = add.inputs[k];
    if (add.inputs[0] == add.inputs[1] || !index.HasSingleConsumer(v)) continue;
    const int p = index.producer(v);
    if (p < 0 || !IsFused(nodes[static_cast<size_t>(p)])) continue;
    const Node& producer = nodes[static_cast<size_t>(p)];
    if (!Compatible(graph->value(v), graph->value(add.inputs[1 - k]),
                    producer.op_type == "FusedConv")) {
      continue;
    }
    if (p > best) {
      best = p;
      best_operand = k;
    }
  }
  if (best < 0) return false;
  Node& fused = nodes[static_cast<size_t>(best)];
  // Post-op inputs follow the primitive's own inputs (X, W, [B]): pad an absent bias.
  if (!fused.attributes.Has("post_op_input")) {
    if (fused.inputs.size() < 3) fused.inputs.resize(3, kNoValue);
    fused.attributes.SetInt("post_op_input", static_cast<int64_t>(fused.inputs.size()));
  }
  fused.inputs.push_back(add.inputs[1 - best_operand]);
  AppendPostOp(&fused, "Add", 0, 0);
  fused.outputs[0] = add.outputs[0];
  add.removed = true;
  return true;
}

}  // namespace

absl::StatusOr<bool> ResidualAddFusion::Run(Graph* graph) const {
  bool changed = false;
  bool progress = true;
  while (progress) {
    progress = false;
    const GraphIndex index(*graph);
    for (Node& add : graph->nodes()) {
      if (!IsOp(add, "Add") || add.inputs.size() != 2) continue;
      if (FuseResidualAdd(graph, index, add)) {
        progress = changed = true;
        break;  // the index is stale now
      }
    }
    graph->Compact();
  }
  return changed;
}

}  // namespace brigade::engine::onnx
