#ifndef BRIGADE_PROCESS_IMAGE_PREPROCESS_H_
#define BRIGADE_PROCESS_IMAGE_PREPROCESS_H_

// ImagePreprocessor: one encoded image (JPEG or PNG) to one image of a model's input tensor, the
// classification pre-processing torchvision writes as
//
//   Resize(resize_shorter) -> CenterCrop(crop_height, crop_width) -> ToTensor -> Normalize(mean,
//   std)
//
// decode -> resize (only the crop window is resampled, see resize.h) -> normalise, channel order
// and layout in one pass (normalize.h). Two modes:
//
//   kExact  full-size decode and PIL's resampling: the same pixels as PIL + torchvision (the
//           decoders link the same libjpeg-turbo PIL does), so the same tensor, bit for bit,
//           for JPEGs and 8-bit PNGs (bench/results/process.md has the measured agreement).
//   kFast   JPEGs are decoded DCT-scaled (1/2, 1/4 or 1/8) to the smallest size that is still
//           at least 15/16 of the resized size (so the resize enlarges by at most 6.7%; a
//           640x480 photo decodes at 320x240 for its 341x256), with the fast integer IDCT and
//           plain chroma upsampling, then resampled from that smaller image (a cheaper resize
//           for the same reason). PNGs are as in kExact. Not bit-exact: see
//           bench/results/process.md for how far from the reference, per image.
//
// The geometry is torchvision's: the shorter side becomes resize_shorter and the longer
// int(resize_shorter * long / short); the crop's offsets are round((size - crop) / 2) with
// Python's round-half-to-even. resize_shorter = 0 resizes straight to the crop size
// (torchvision's Resize((h, w)), no crop).
//
// EXIF orientation is not applied (neither does PIL's Image.open nor torchvision).
//
// Thread safety: immutable after Create; Run may be called from any number of threads at once.
// Failure: Create answers INVALID_ARGUMENT for inconsistent options; Run answers
// INVALID_ARGUMENT naming what is wrong with the image (format, corruption, truncation, pixel
// limit, an aspect ratio too extreme to resize); the caller names which image it was.

#include <cstddef>
#include <span>
#include <string_view>

#include "absl/status/statusor.h"
#include "process/image.h"
#include "process/normalize.h"
#include "process/resize.h"

namespace brigade::process {

enum class PreprocessMode { kExact, kFast };
enum class OutputType { kFp32, kUint8 };

// Largest crop and resize_shorter Create accepts.
inline constexpr int kMaxCropDimension = 8192;

struct PreprocessOptions {
  int resize_shorter = 256;
  int crop_width = 224;
  int crop_height = 224;
  ResizeFilter filter = ResizeFilter::kBilinear;
  NormalizeOptions normalize;
  OutputType output = OutputType::kFp32;
  PreprocessMode mode = PreprocessMode::kExact;
  int64_t max_pixels = kDefaultMaxPixels;
};

// Where the crop sits in the resized image.
struct PreprocessGeometry {
  int resized_width = 0;
  int resized_height = 0;
  Window crop;
};

class ImagePreprocessor {
 public:
  static absl::StatusOr<ImagePreprocessor> Create(const PreprocessOptions& options);

  const PreprocessOptions& options() const { return options_; }
  // Elements (OutputChannels(order) * crop_width * crop_height) and bytes of one output image.
  size_t output_elements() const;
  size_t output_bytes() const;

  // The resize and crop of an image of `source` size.
  absl::StatusOr<PreprocessGeometry> Geometry(const ImageInfo& source) const;

  // Decodes `encoded` and writes its output_bytes() bytes (FP32 or UINT8 elements) to `out`.
  absl::Status Run(std::string_view encoded, std::span<std::byte> out) const;

  // The pixels before the last step: decoded, resized and cropped RGB.
  absl::StatusOr<Image> DecodeResizeCrop(std::string_view encoded) const;

 private:
  ImagePreprocessor(const PreprocessOptions& options, Normalizer normalizer)
      : options_(options), normalizer_(normalizer) {}

  PreprocessOptions options_;
  Normalizer normalizer_;
};

}  // namespace brigade::process

#endif  // BRIGADE_PROCESS_IMAGE_PREPROCESS_H_
