#ifndef BRIGADE_PROCESS_RESIZE_H_
#define BRIGADE_PROCESS_RESIZE_H_

// Resampling an RGB image, written to give exactly the pixels of PIL's Image.resize (Pillow 9's
// ImagingResample), which is what torchvision's Resize does to a PIL image:
//
//   kBilinear  the triangle filter; when downscaling its support widens by the scale factor,
//              so every source pixel contributes (the "antialias" of torchvision's Resize).
//   kArea      the box filter: each output pixel is the average of the source area it covers
//              (PIL's BOX, OpenCV's INTER_AREA), weighted by the overlap at its edges.
//
// Like PIL: coefficients in double, normalised per output pixel and rounded to 22-bit fixed
// point; a horizontal pass into an 8-bit intermediate, then a vertical pass, each rounding and
// clamping to 0..255. Only a window of the output is computed (`ResizeWindow`): the pixels a
// centre crop keeps, without resampling what it throws away. An output pixel depends only on its
// own coordinates, so the window equals the same region of the whole resized image.
//
// The loops are written for the compiler to vectorize (the vertical pass over a row's bytes)
// and are built for AVX2 and a baseline ISA, picked at run time (function multiversioning).
//
// Thread safety: reentrant. Ownership: the source is borrowed for the call. Failure:
// INVALID_ARGUMENT for empty images, sizes above kMaxResizeDimension, or a window outside the
// output.

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "process/image.h"

namespace brigade::process {

enum class ResizeFilter { kBilinear, kArea };

// Largest output (and source) dimension ResizeWindow accepts.
inline constexpr int kMaxResizeDimension = 1 << 16;

// A rectangle of the resized image, in its pixel coordinates.
struct Window {
  int x = 0;
  int y = 0;
  int width = 0;
  int height = 0;
};

// One axis' coefficients for the outputs [out_begin, out_begin + count): for output i, `first[i]`
// is the first source index and `taps[i]` how many follow, with weights
// `weights[i * max_taps ...]` in 22-bit fixed point.
struct ResampleAxis {
  int max_taps = 0;
  std::vector<int32_t> first;
  std::vector<int32_t> taps;
  std::vector<int32_t> weights;
};

inline constexpr int kResamplePrecisionBits = 22;

// PIL's precompute_coeffs + normalize_coeffs_8bpc for in_size -> out_size, restricted to the
// outputs [out_begin, out_begin + count). Preconditions (checked by ResizeWindow): sizes in
// 1..kMaxResizeDimension, the range inside [0, out_size).
ResampleAxis ComputeResampleAxis(int in_size, int out_size, int out_begin, int count,
                                 ResizeFilter filter);

// Resizes `source` to out_width x out_height and returns the part of the result in `window`.
absl::StatusOr<Image> ResizeWindow(const ImageView& source, int out_width, int out_height,
                                   const Window& window, ResizeFilter filter);

}  // namespace brigade::process

#endif  // BRIGADE_PROCESS_RESIZE_H_
