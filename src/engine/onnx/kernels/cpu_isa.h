#ifndef BRIGADE_ENGINE_ONNX_KERNELS_CPU_ISA_H_
#define BRIGADE_ENGINE_ONNX_KERNELS_CPU_ISA_H_

// The instruction set the ONNX engine's oneDNN kernels run with on this CPU, by oneDNN's name
// ("avx2", "avx2_vnni", "avx512_core", "avx512_core_vnni", "avx512_core_bf16",
// "avx512_core_amx"; "sse41" or "avx" on old CPUs), for `brigade doctor` to hold against what the
// CPU offers: oneDNN picks the best it knows at run time, capped by DNNL_MAX_CPU_ISA.
// "unknown" for a value this list does not name (a oneDNN newer than this file).
//
//
// LoopIsaForCpu(): which compiled variant the engine's own vectorised loops (Resize, the
// BatchNormalization scale-shift, per-channel Add/Mul on blocked layouts) run: each is built for
// AVX-512, AVX2+FMA and the x86-64 baseline, and the widest this CPU runs is taken, capped by the
// environment variable BRIGADE_ONNX_MAX_ISA ("avx2" or "baseline"), read once, so that a test on
// an AVX-512 machine can run the narrower ones. An explicit dispatch, not target_clones, whose
// ifunc resolver runs before a sanitizer runtime is up (src/process/resize.cc found it so).
//
// Thread safety: the answers are computed once, then read-only. Failure: none (an unknown
// BRIGADE_ONNX_MAX_ISA value caps nothing).

#include <string_view>

namespace brigade::engine::onnx {

std::string_view DnnlCpuIsaName();

// True when oneDNN runs bf16 dot products natively here (AVX-512 BF16 or AMX), the condition for
// ComputePrecision::kBf16 to be faster than fp32; elsewhere oneDNN emulates them, slower.
bool CpuMultipliesBf16();

enum class LoopIsa { kBaseline, kAvx2, kAvx512 };
LoopIsa LoopIsaForCpu();

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_KERNELS_CPU_ISA_H_
