#ifndef BRIGADE_ENGINE_ONNX_KERNELS_REGISTRY_H_
#define BRIGADE_ENGINE_ONNX_KERNELS_REGISTRY_H_

// KernelRegistry: the table of ops the engine executes, with the facts the loader, the passes
// and the planner need about each one:
//
//   domain, op type, opset range   which node versions the kernel implements
//   value_inputs                   inputs whose *contents* decide output shapes (Reshape's shape,
//                                  Slice's starts...): the planner must know them at plan time
//   alias_input                    output 0 may share this input's buffer (Reshape, Squeeze...)
//   blocked_inputs                 inputs that may arrive in a oneDNN blocked layout
//   foldable                       deterministic, so results may be computed ahead of time
//   reads_input_data               false for ops that look only at input shapes (Shape, Size):
//                                  they are evaluated at plan time and their inputs may be in
//                                  any layout
//   dynamic_output                 output 0's shape is known only after Run (NonMaxSuppression):
//                                  the factory describes its capacity, Run reports the shape
//                                  (RunContext::dynamic_shape) and the planner plans the nodes
//                                  after it per reported shape (execution_plan.h)
//
// Thread safety: Get() builds the table once (thread-safe static) and it is read-only afterwards.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/onnx/kernels/kernel.h"

namespace brigade::engine::onnx {

struct KernelDef {
  std::string domain;
  std::string op_type;
  int since_version = 1;
  int until_version = 1 << 20;
  KernelFactory create = nullptr;
  uint32_t value_inputs = 0;  // bit i: input i must be known at plan time
  int alias_input = -1;
  uint32_t blocked_inputs = 0;  // bit i: input i may be blocked
  bool foldable = true;
  bool reads_input_data = true;
  bool dynamic_output = false;  // needs foldable = false (Add checks)

  bool NeedsValue(size_t input) const { return input < 32 && (value_inputs >> input) & 1u; }
  // When set, a blocked input listed in blocked_inputs is taken only where this says so for the
  // node and its inputs (null: not defined yet); otherwise the planner reorders it to plain first.
  bool (*takes_blocked)(const Node& node, size_t input,
                        std::span<const ValueInfo* const> inputs) = nullptr;
  bool AcceptsBlocked(size_t input) const { return input < 32 && (blocked_inputs >> input) & 1u; }
  bool TakesBlocked(const Node& node, size_t input,
                    std::span<const ValueInfo* const> inputs) const {
    return AcceptsBlocked(input) &&
           (takes_blocked == nullptr || takes_blocked(node, input, inputs));
  }
  // When set, decides per node which inputs must be known at plan time (one entry per node
  // input), instead of `value_inputs`: a Loop needs its trip count then only when it has scan
  // outputs, and a control-flow node needs a captured value when its subgraph does. Called once
  // per node, so that an analysis of nested subgraphs stays linear in their size.
  std::vector<bool> (*value_inputs_of)(const Node& node) = nullptr;
  // Per input of `node`: whether it must be known at plan time.
  std::vector<bool> ValueInputs(const Node& node) const {
    if (value_inputs_of != nullptr) return value_inputs_of(node);
    std::vector<bool> needed(node.inputs.size());
    for (size_t k = 0; k < needed.size(); ++k) needed[k] = NeedsValue(k);
    return needed;
  }
};

class KernelRegistry {
 public:
  static const KernelRegistry& Get();

  void Add(KernelDef def);
  // The kernel for `op_type` in `domain` at `opset`, or null.
  const KernelDef* Find(std::string_view domain, std::string_view op_type, int opset) const;
  // True when some version of the op is registered (to tell "unknown op" from "unsupported
  // version" in errors).
  bool HasOp(std::string_view domain, std::string_view op_type) const;
  // Names of every registered op ("Conv", "ai.brigade.FusedConv"), sorted and unique.
  std::vector<std::string> OpNames() const;

 private:
  std::vector<KernelDef> defs_;
};

// Short-hands for registration tables.
inline constexpr uint32_t Inputs(std::initializer_list<int> indices) {
  uint32_t mask = 0;
  for (int i : indices) mask |= 1u << i;
  return mask;
}

// One registration function per kernel file; KernelRegistry::Get() calls them all.
void RegisterElementwiseKernels(KernelRegistry* registry);
void RegisterBinaryKernels(KernelRegistry* registry);
void RegisterShapeKernels(KernelRegistry* registry);
void RegisterTensorKernels(KernelRegistry* registry);
void RegisterSliceGatherKernels(KernelRegistry* registry);
void RegisterReduceKernels(KernelRegistry* registry);
void RegisterSoftmaxKernels(KernelRegistry* registry);
void RegisterMatMulKernels(KernelRegistry* registry);
void RegisterConvKernels(KernelRegistry* registry);
void RegisterPoolKernels(KernelRegistry* registry);
void RegisterNormalizationKernels(KernelRegistry* registry);
void RegisterResizeKernels(KernelRegistry* registry);
void RegisterQuantizeKernels(KernelRegistry* registry);
void RegisterQLinearKernels(KernelRegistry* registry);
void RegisterQLinearAddKernel(KernelRegistry* registry);
void RegisterDynamicQuantMatMulKernel(KernelRegistry* registry);
void RegisterRnnKernels(KernelRegistry* registry);
void RegisterControlFlowKernels(KernelRegistry* registry);
void RegisterScanKernel(KernelRegistry* registry);
void RegisterScatterKernels(KernelRegistry* registry);
void RegisterCumSumTriluKernels(KernelRegistry* registry);
void RegisterEinsumKernels(KernelRegistry* registry);
void RegisterSpaceDepthKernels(KernelRegistry* registry);
void RegisterNonMaxSuppressionKernel(KernelRegistry* registry);

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_KERNELS_REGISTRY_H_
