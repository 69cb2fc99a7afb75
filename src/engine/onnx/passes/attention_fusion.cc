#include "engine/onnx/passes/attention_fusion.h"

#include <span>
#include <vector>

#include "engine/onnx/kernels/post_ops.h"
#include "engine/onnx/passes/pass_util.h"

namespace brigade::engine::onnx {
namespace {

bool IsFusedMatMul(const Node& node) {
  return !node.removed && node.domain == kBrigadeDomain && node.op_type == "FusedMatMul";
}

size_t RankOf(const Graph& graph, ValueId id) {
  const Value& v = graph.value(id);
  return v.shape.has_value() ? v.shape->size() : 0;
}

// The Transpose's permutation (default: reversed dims), or empty when unusable.
std::vector<int64_t> PermOf(const Graph& graph, const Node& transpose) {
  std::vector<int64_t> perm(transpose.attributes.GetInts("perm").begin(),
                            transpose.attributes.GetInts("perm").end());
  const size_t rank = RankOf(graph, transpose.inputs[0]);
  if (perm.empty()) {
    for (size_t i = 0; i < rank; ++i) perm.push_back(static_cast<int64_t>(rank - 1 - i));
  }
  if (perm.size() != rank || rank < 2) return {};
  return perm;
}

// oneDNN 2.6 runs a strided matmul on its optimized kernels (gemm, brgemm) only when each operand
// has unit stride in one of its last two dims (a transposed operand is fine) and the destination
// in its last; anything else falls to `ref:any`, hundreds of times slower (ConvNeXt-Tiny's
// NHWC → NCHW Transpose folded into perm_out: 7.3 s for one 3136×384×96 matmul, against
// ~0.4 ms for the Transpose as a reorder). So a Transpose folds only when its permutation keeps
// that: perm[i] names the source axis that logical axis i reads, and the source's contiguous
// axis is its last.
bool OperandKeepsUnitStride(std::span<const int64_t> perm) {
  const auto last = static_cast<int64_t>(perm.size()) - 1;
  return perm[perm.size() - 1] == last || perm[perm.size() - 2] == last;
}

bool OutputKeepsUnitStride(std::span<const int64_t> perm) {
  return perm.back() == static_cast<int64_t>(perm.size()) - 1;
}

// Folds Transposes feeding inputs 0 and 1 into perm_a / perm_b.
bool FoldInputTransposes(Graph* graph, const GraphIndex& index, Node& mm) {
  bool changed = false;
  for (size_t k = 0; k < 2; ++k) {
    Node* t = SoleProducer(graph, index, mm.inputs[k], "Transpose");
    if (t == nullptr || ConstantOf(*graph, t->inputs[0]) != nullptr) continue;
    const std::vector<int64_t> p = PermOf(*graph, *t);
    if (p.empty()) continue;
    const char* attr = k == 0 ? "perm_a" : "perm_b";
    std::vector<int64_t> q(mm.attributes.GetInts(attr).begin(), mm.attributes.GetInts(attr).end());
    std::vector<int64_t> composed;
    if (q.empty()) {
      composed = p;
    } else {
      if (q.size() != p.size()) continue;
      for (int64_t i : q) composed.push_back(p[static_cast<size_t>(i)]);
    }
    if (!OperandKeepsUnitStride(composed)) continue;
    mm.attributes.SetInts(attr, composed);
    mm.inputs[k] = t->inputs[0];
    t->removed = true;
    changed = true;
  }
  return changed;
}

// Folds a Transpose reading the output into perm_out.
bool FoldOutputTranspose(Graph* graph, const GraphIndex& index, Node& mm) {
  if (mm.attributes.Has("perm_out")) return false;
  const ValueId out = mm.outputs[0];
  if (!index.HasSingleConsumer(out)) return false;
  Node& t = graph->nodes()[static_cast<size_t>(index.consumers(out)[0])];
  if (!IsOp(t, "Transpose")) return false;
  // Both operands must be at least 2-D (numpy's 1-D rules drop dims perm_out cannot express).
  if (RankOf(*graph, mm.inputs[0]) < 2 || RankOf(*graph, mm.inputs[1]) < 2) return false;
  const std::vector<int64_t> p = PermOf(*graph, t);
  if (p.empty() || p.size() != RankOf(*graph, out) || !OutputKeepsUnitStride(p)) return false;
  mm.attributes.SetInts("perm_out", p);
  mm.outputs[0] = t.outputs[0];
  t.removed = true;
  return true;
}

// Folds Div/Mul by a scalar constant into alpha (only before any bias or post-op).
bool FoldScale(Graph* graph, const GraphIndex& index, Node& mm) {
  if (mm.has_input(2) || PostOpCount(mm) > 0) return false;
  const ValueId out = mm.outputs[0];
  if (!index.HasSingleConsumer(out)) return false;
  Node& op = graph->nodes()[static_cast<size_t>(index.consumers(out)[0])];
  double factor = 0;
  if (IsOp(op, "Div") && op.inputs[0] == out) {
    const std::optional<double> c = ScalarConstant(*graph, op.inputs[1]);
    if (!c.has_value() || *c == 0) return false;
    factor = 1.0 / *c;
  } else if (IsOp(op, "Mul") && op.inputs.size() == 2) {
    const ValueId other = op.inputs[0] == out ? op.inputs[1] : op.inputs[0];
    const std::optional<double> c = ScalarConstant(*graph, other);
    if (!c.has_value()) return false;
    factor = *c;
  } else {
    return false;
  }
  const float alpha = mm.attributes.GetFloat("alpha", 1.0f);
  mm.attributes.SetFloat("alpha", static_cast<float>(alpha * factor));
  mm.outputs[0] = op.outputs[0];
  op.removed = true;
  return true;
}

}  // namespace

absl::StatusOr<bool> AttentionFusion::Run(Graph* graph) const {
  bool changed = false;
  bool progress = true;
  while (progress) {
    progress = false;
    const GraphIndex index(*graph);
    for (Node& node : graph->nodes()) {
      if (!IsFusedMatMul(node)) continue;
      if (FoldInputTransposes(graph, index, node) || FoldOutputTranspose(graph, index, node) ||
          FoldScale(graph, index, node)) {
        progress = changed = true;
        break;  // the index is stale
      }
    }
    graph->Compact();
  }
  return changed;
}

}  // namespace brigade::engine::onnx
