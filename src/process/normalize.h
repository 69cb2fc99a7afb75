#ifndef BRIGADE_PROCESS_NORMALIZE_H_
#define BRIGADE_PROCESS_NORMALIZE_H_

// The last step of image pre-processing: an RGB image to a model's input tensor, in one pass
// that does torchvision's ToTensor and Normalize, the channel order and the layout together.
//
//   FP32   out = (pixel / 255 - mean[c]) / std[c], in float32 with exactly torchvision's
//          operations (a 256-entry table per channel holds the results), so it matches
//          ToTensor -> Normalize bit for bit.
//   UINT8  out = pixel (no normalisation; for models that take raw bytes, e.g. quantized ones).
//
// Channel order kBgr swaps R and B; mean[c] and std[c] are for output channel c (so for BGR
// they are given in B, G, R order). kGray writes one channel, PIL's Image.convert("L") luma
// (R * 19595 + G * 38470 + B * 7471 + 2^15) >> 16, normalised with mean[0] and std[0]; a grey
// image (R = G = B) keeps its value exactly. Layout kChw writes channel planes (one image of
// NCHW), kHwc interleaved pixels (one image of NHWC); with one channel the two are the same.
//
// Thread safety: reentrant; a Normalizer is immutable once built and may be shared.
// Failure: INVALID_ARGUMENT when a std is zero or not finite, a mean not finite, or the output
// span's size is not the image's.

#include <array>
#include <cstdint>
#include <span>

#include "absl/status/statusor.h"
#include "process/image.h"

namespace brigade::process {

enum class ChannelOrder { kRgb, kBgr, kGray };

// Channels of the output tensor: 1 for kGray, else 3.
inline int OutputChannels(ChannelOrder order) { return order == ChannelOrder::kGray ? 1 : 3; }
enum class Layout { kChw, kHwc };

struct NormalizeOptions {
  std::array<float, 3> mean = {0.485f, 0.456f, 0.406f};  // ImageNet, torchvision's values
  std::array<float, 3> std = {0.229f, 0.224f, 0.225f};
  ChannelOrder order = ChannelOrder::kRgb;
  Layout layout = Layout::kChw;
};

class Normalizer {
 public:
  static absl::StatusOr<Normalizer> Create(const NormalizeOptions& options);

  // `out` holds image.width * image.height * OutputChannels(order) elements.
  absl::Status ToFloat(const Image& image, std::span<float> out) const;
  absl::Status ToUint8(const Image& image, std::span<uint8_t> out) const;

 private:
  explicit Normalizer(const NormalizeOptions& options) : options_(options) {}

  NormalizeOptions options_;
  // table_[c][v]: output channel c's value for pixel value v.
  std::array<std::array<float, 256>, 3> table_{};
};

}  // namespace brigade::process

#endif  // BRIGADE_PROCESS_NORMALIZE_H_
