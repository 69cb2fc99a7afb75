#ifndef BRIGADE_ENGINE_ONNX_PASSES_CONSTANT_FOLDING_H_
#define BRIGADE_ENGINE_ONNX_PASSES_CONSTANT_FOLDING_H_

// ConstantFolding: evaluates, at load time, every node whose inputs are all constants, using the
// engine's own kernels, and replaces its outputs by the results.
//
//   W ─Transpose─► Wt ─MatMul(X, ·)─►        ⇒        Wt' (constant) ─MatMul(X, ·)─►
//
// Results larger than kMaxFoldedBytes are left to run time (folding would only trade compute
// for memory held by every model copy).

#include "engine/onnx/passes/pass.h"

namespace brigade::engine::onnx {

class ConstantFolding final : public GraphPass {
 public:
  static constexpr size_t kMaxFoldedBytes = size_t{256} << 20;
  std::string_view name() const override { return "constant_folding"; }
  absl::StatusOr<bool> Run(Graph* graph) const override;
};

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_PASSES_CONSTANT_FOLDING_H_
