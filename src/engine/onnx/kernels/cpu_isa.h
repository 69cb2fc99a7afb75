#ifndef BRIGADE_ENGINE_ONNX_KERNELS_CPU_ISA_H_
#define BRIGADE_ENGINE_ONNX_KERNELS_CPU_ISA_H_

// The instruction set the ONNX engine's oneDNN kernels run with on this CPU, by oneDNN's name
// ("avx2", "avx2_vnni", "avx512_core", "avx512_core_vnni", "avx512_core_bf16",
// "avx512_core_amx"; "sse41" or "avx" on old CPUs), for `brigade doctor` to hold against what the
// CPU offers: oneDNN picks the best it knows at run time, capped by DNNL_MAX_CPU_ISA.
// "unknown" for a value this list does not name (a oneDNN newer than this file).
//
// Thread safety: the answer is computed once, then read-only. Failure: none.

#include <string_view>

namespace brigade::engine::onnx {

std::string_view DnnlCpuIsaName();

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_KERNELS_CPU_ISA_H_
