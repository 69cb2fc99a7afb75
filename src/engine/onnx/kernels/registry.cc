#include "engine/onnx/kernels/registry.h"

#include <algorithm>
#include <utility>

#include "core/check.h"
#include "core/strings.h"

namespace brigade::engine::onnx {

const KernelRegistry& KernelRegistry::Get() {
  static const KernelRegistry registry = [] {
    KernelRegistry table;
    KernelRegistry* r = &table;
    RegisterElementwiseKernels(r);
    RegisterBinaryKernels(r);
    RegisterShapeKernels(r);
    RegisterTensorKernels(r);
    RegisterSliceGatherKernels(r);
    RegisterReduceKernels(r);
    RegisterSoftmaxKernels(r);
    RegisterMatMulKernels(r);
    RegisterConvKernels(r);
    RegisterPoolKernels(r);
    RegisterNormalizationKernels(r);
    RegisterResizeKernels(r);
    RegisterQuantizeKernels(r);
    RegisterQLinearAddKernel(r);
    RegisterDynamicQuantMatMulKernel(r);
    RegisterRnnKernels(r);
    RegisterControlFlowKernels(r);
    RegisterScanKernel(r);
    RegisterScatterKernels(r);
    RegisterCumSumTriluKernels(r);
    RegisterEinsumKernels(r);
    RegisterSpaceDepthKernels(r);
    RegisterNonMaxSuppressionKernel(r);
    return table;
  }();
  return registry;
}

void KernelRegistry::Add(KernelDef def) {
  // Evaluating ahead of time would take the capacity a dynamic kernel describes as its shape.
  BRIGADE_CHECK(!def.dynamic_output || !def.foldable, "a dynamic-output kernel is not foldable");
  defs_.push_back(std::move(def));
}

const KernelDef* KernelRegistry::Find(std::string_view domain, std::string_view op_type,
                                      int opset) const {
  for (const KernelDef& def : defs_) {
    if (def.op_type == op_type && def.domain == domain && opset >= def.since_version &&
        opset <= def.until_version) {
      return &def;
    }
  }
  return nullptr;
}

bool KernelRegistry::HasOp(std::string_view domain, std::string_view op_type) const {
  return std::any_of(defs_.begin(), defs_.end(), [&](const KernelDef& def) {
    return def.op_type == op_type && def.domain == domain;
  });
}

std::vector<std::string> KernelRegistry::OpNames() const {
  std::vector<std::string> names;
  for (const KernelDef& def : defs_) {
    names.push_back(def.domain.empty() ? def.op_type : StrCat(def.domain, ".", def.op_type));
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

}  // namespace brigade::engine::onnx
