#ifndef BRIGADE_ENGINE_ONNX_PASSES_CONSTANT_FOLDING_H_
#define BRIGADE_ENGINE_ONNX_PASSES_CONSTANT_FOLDING_H_

// ConstantFolding: evaluates, at load time, every node whose inputs are all constants, using the
// engine's own kernels, and replaces its outputs by the results.
//
//   W ─Transpose─► Wt ─MatMul(X, ·)─►        ⇒        Wt' (constant) ─MatMul(X, ·)─►
//
// The results of one run take at most a budget together: by default kMaxFoldedBytes plus twice
// the bytes of the graph's own constants (a model file's shapes are untrusted, and folding only
// trades compute for memory every model copy holds, so a small file must not grow into gigabytes,
// while a large model's weights, cast or transposed, still fold); what does not fit is left to
// run time.

#include "engine/onnx/passes/pass.h"

namespace brigade::engine::onnx {

class ConstantFolding final : public GraphPass {
 public:
  static constexpr size_t kMaxFoldedBytes = size_t{256} << 20;
  explicit ConstantFolding(size_t base_budget_bytes = kMaxFoldedBytes)
      : base_budget_bytes_(base_budget_bytes) {}
  std::string_view name() const override { return "constant_folding"; }
  absl::StatusOr<bool> Run(Graph* graph) const override;

 private:
  size_t base_budget_bytes_;
};

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_PASSES_CONSTANT_FOLDING_H_
