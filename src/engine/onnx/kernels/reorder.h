#ifndef BRIGADE_ENGINE_ONNX_KERNELS_REORDER_H_
#define BRIGADE_ENGINE_ONNX_KERNELS_REORDER_H_

// The layout-conversion step the planner inserts where a blocked value meets an op that needs
// the plain layout (or a graph output): one oneDNN reorder from `from` to `to`.
// Thread safety: as OpKernel.

#include <memory>

#include "absl/status/statusor.h"
#include "engine/onnx/kernels/kernel.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace brigade::engine::onnx {

absl::StatusOr<std::unique_ptr<OpKernel>> MakeReorderKernel(const dnnl::engine& engine,
                                                            const dnnl::memory::desc& from,
                                                            const dnnl::memory::desc& to);

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_KERNELS_REORDER_H_
