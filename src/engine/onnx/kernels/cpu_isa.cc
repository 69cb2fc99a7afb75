#include "engine/onnx/kernels/cpu_isa.h"

#include <cstdlib>
#include <string_view>

#include "oneapi/dnnl/dnnl.hpp"

namespace brigade::engine::onnx {

std::string_view DnnlCpuIsaName() {
  static const std::string_view name = []() -> std::string_view {
    switch (static_cast<dnnl_cpu_isa_t>(dnnl::get_effective_cpu_isa())) {
      case dnnl_cpu_isa_sse41:
        return "sse41";
      case dnnl_cpu_isa_avx:
        return "avx";
      case dnnl_cpu_isa_avx2:
        return "avx2";
      case dnnl_cpu_isa_avx2_vnni:
        return "avx2_vnni";
      case dnnl_cpu_isa_avx512_core:
        return "avx512_core";
      case dnnl_cpu_isa_avx512_core_vnni:
        return "avx512_core_vnni";
      case dnnl_cpu_isa_avx512_core_bf16:
        return "avx512_core_bf16";
      case dnnl_cpu_isa_avx512_core_amx:
        return "avx512_core_amx";
      default:
        return "unknown";
    }
  }();
  return name;
}

bool CpuMultipliesBf16() {
  const std::string_view isa = DnnlCpuIsaName();
  return isa == "avx512_core_bf16" || isa == "avx512_core_amx";
}

LoopIsa LoopIsaForCpu() {
  static const LoopIsa isa = [] {
    LoopIsa best = LoopIsa::kBaseline;
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")) {
      best = LoopIsa::kAvx512;
    } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
      best = LoopIsa::kAvx2;
    }
    const char* cap = std::getenv("BRIGADE_ONNX_MAX_ISA");  // NOLINT(concurrency-mt-unsafe)
    const std::string_view limit = cap == nullptr ? "" : cap;
    if (limit == "baseline") return LoopIsa::kBaseline;
    if (limit == "avx2" && best == LoopIsa::kAvx512) return LoopIsa::kAvx2;
    return best;
  }();
  return isa;
}

}  // namespace brigade::engine::onnx
