#ifndef BRIGADE_ENGINE_ONNX_KERNELS_CONV_GEOMETRY_H_
#define BRIGADE_ENGINE_ONNX_KERNELS_CONV_GEOMETRY_H_

// The spatial arithmetic shared by Conv, ConvTranspose and the pooling ops: kernel shape,
// strides, dilations and padding (explicit or auto_pad) resolved against an input shape into
// output sizes and begin/end pads.
// Thread safety: value types and free functions.

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/onnx/kernels/kernel.h"

namespace brigade::engine::onnx {

// Largest stride, dilation, kernel size or pad taken from a model (and group, where the loader
// checks it): the geometry multiplies an input dimension (at most kMaxTensorBytes) by a stride,
// and a dilation by a kernel size, and both products must stay far inside int64.
inline constexpr int64_t kMaxWindowValue = int64_t{1} << 24;

struct ConvGeometry {
  std::vector<int64_t> kernel, strides, dilations, pad_begin, pad_end, output;
};

// Forward window geometry (Conv, pooling). `kernel` comes from the weights or the
// kernel_shape attribute; `ceil_mode` rounds output sizes up (pooling).
absl::StatusOr<ConvGeometry> ForwardGeometry(const KernelContext& ctx, const Shape& input,
                                             std::vector<int64_t> kernel, bool ceil_mode);

// ConvTranspose geometry, including output_padding and output_shape.
absl::StatusOr<ConvGeometry> TransposedGeometry(const KernelContext& ctx, const Shape& input,
                                                std::vector<int64_t> kernel);

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_KERNELS_CONV_GEOMETRY_H_
