#include "engine/onnx/exec/flops.h"

#include <string_view>

namespace brigade::engine::onnx {
namespace {

int64_t Product(const Shape& shape, size_t begin) {
  int64_t n = 1;
  for (size_t i = begin; i < shape.size(); ++i) n *= shape[i];
  return n;
}

}  // namespace

int64_t EstimateFlops(const Node& node, const KernelContext& ctx) {
  const std::string_view op = node.op_type;
  if (ctx.outputs.empty() || ctx.outputs[0].dtype == DataType::kInvalid) return 0;
  const Shape& out = ctx.outputs[0].shape;
  const int64_t group = node.attributes.GetInt("group", 1);
  if (op == "Conv" || op == "FusedConv" || op == "ConvInteger" || op == "QLinearConv") {
    const size_t w_index = op == "QLinearConv" ? 3 : 1;
    if (!ctx.has_input(w_index)) return 0;
    const Shape& w = ctx.input(w_index).shape;  // [M, C/g, k...]
    if (w.size() < 3 || out.size() < 3) return 0;
    return 2 * Product(out, 0) * Product(w, 1);
  }
  if (op == "ConvTranspose") {
    if (!ctx.has_input(0) || !ctx.has_input(1)) return 0;
    const Shape& x = ctx.input(0).shape;  // [N, C, spatial...]
    const Shape& w = ctx.input(1).shape;  // [C, M/g, k...]
    if (w.size() < 3) return 0;
    (void)group;
    return 2 * Product(x, 0) * Product(w, 1);
  }
  if (op == "MatMul" || op == "FusedMatMul" || op == "Gemm" || op == "MatMulInteger" ||
      op == "QLinearMatMul") {
    const size_t a_index = 0;
    if (!ctx.has_input(a_index)) return 0;
    const Shape& a = ctx.input(a_index).shape;
    if (a.empty()) return 0;
    // K is A's reduced dim: the last one, or the first of a transposed 2-D Gemm/FusedMatMul A.
    int64_t k = a.back();
    if (node.attributes.GetInt("transA", 0) != 0 && a.size() >= 2) k = a[a.size() - 2];
    const auto perm = node.attributes.GetInts("perm_a");
    if (!perm.empty() && perm.size() == a.size()) {
      k = a[static_cast<size_t>(perm.back())];
    }
    return 2 * Product(out, 0) * k;
  }
  return 0;
}

}  // namespace brigade::engine::onnx
