#include "process/image_preprocess.h"

#include <algorithm>

#include "core/status_macros.h"
#include "core/strings.h"
#include "process/image_decoder.h"

namespace brigade::process {
namespace {

// Python's int(round((size - crop) / 2.0)): halves go to the even neighbour.
int CenterOffset(int size, int crop) {
  const int diff = size - crop;
  const int half = diff / 2;
  if (diff % 2 == 0) return half;
  return half % 2 == 0 ? half : half + 1;
}

}  // namespace

absl::StatusOr<ImagePreprocessor> ImagePreprocessor::Create(const PreprocessOptions& options) {
  if (options.crop_width <= 0 || options.crop_height <= 0 ||
      options.crop_width > kMaxCropDimension || options.crop_height > kMaxCropDimension) {
    return absl::InvalidArgumentError(StrCat("crop must be 1..", kMaxCropDimension,
                                             " in each dimension, got ", options.crop_width, "x",
                                             options.crop_height));
  }
  if (options.resize_shorter != 0 &&
      (options.resize_shorter < std::max(options.crop_width, options.crop_height) ||
       options.resize_shorter > kMaxCropDimension)) {
    return absl::InvalidArgumentError(
        StrCat("resize (the shorter side) must be 0 or at least the crop's larger side (",
               std::max(options.crop_width, options.crop_height), ") and at most ",
               kMaxCropDimension, ", got ", options.resize_shorter));
  }
  if (options.max_pixels <= 0) {
    return absl::InvalidArgumentError(
        StrCat("max_pixels must be positive, got ", options.max_pixels));
  }
  BRIGADE_ASSIGN_OR_RETURN(Normalizer normalizer, Normalizer::Create(options.normalize));
  return ImagePreprocessor(options, normalizer);
}

size_t ImagePreprocessor::output_elements() const {
  return static_cast<size_t>(options_.crop_width) * options_.crop_height *
         OutputChannels(options_.normalize.order);
}

size_t ImagePreprocessor::output_bytes() const {
  return output_elements() * (options_.output == OutputType::kFp32 ? sizeof(float) : 1);
}

absl::StatusOr<PreprocessGeometry> ImagePreprocessor::Geometry(const ImageInfo& source) const {
  PreprocessGeometry geometry;
  if (options_.resize_shorter == 0) {
    geometry.resized_width = options_.crop_width;
    geometry.resized_height = options_.crop_height;
    geometry.crop = {0, 0, options_.crop_width, options_.crop_height};
    return geometry;
  }
  const int64_t shorter = std::min(source.width, source.height);
  const int64_t longer = std::max(source.width, source.height);
  if (shorter <= 0) {
    return absl::InvalidArgumentError(
        StrCat("image has no pixels (", source.width, "x", source.height, ")"));
  }
  const int64_t resized_long = options_.resize_shorter * longer / shorter;
  if (resized_long > kMaxResizeDimension) {
    return absl::InvalidArgumentError(StrCat("image of ", source.width, "x", source.height,
                                             " is too elongated to resize (its longer side "
                                             "would be ",
                                             resized_long, " pixels)"));
  }
  if (source.width <= source.height) {
    geometry.resized_width = options_.resize_shorter;
    geometry.resized_height = static_cast<int>(resized_long);
  } else {
    geometry.resized_width = static_cast<int>(resized_long);
    geometry.resized_height = options_.resize_shorter;
  }
  geometry.crop = {CenterOffset(geometry.resized_width, options_.crop_width),
                   CenterOffset(geometry.resized_height, options_.crop_height), options_.crop_width,
                   options_.crop_height};
  return geometry;
}

absl::StatusOr<Image> ImagePreprocessor::DecodeResizeCrop(std::string_view encoded) const {
  DecodeOptions decode;
  decode.max_pixels = options_.max_pixels;
  BRIGADE_ASSIGN_OR_RETURN(const ImageInfo info, ReadImageInfo(encoded));
  BRIGADE_ASSIGN_OR_RETURN(const PreprocessGeometry geometry, Geometry(info));
  if (options_.mode == PreprocessMode::kFast) {
    // At least 15/16 of the resized size: the resize may then enlarge by up to 6.7%, which lets
    // the common 640x480 -> 341x256 decode at 1/2 (320x240).
    decode.min_width = (geometry.resized_width * 15 + 15) / 16;
    decode.min_height = (geometry.resized_height * 15 + 15) / 16;
    decode.fast_dct = true;
    decode.fast_upsample = true;
  }
  BRIGADE_ASSIGN_OR_RETURN(const Image image, DecodeImage(encoded, decode));
  return ResizeWindow(ImageView::Of(image), geometry.resized_width, geometry.resized_height,
                      geometry.crop, options_.filter);
}

absl::Status ImagePreprocessor::Run(std::string_view encoded, std::span<std::byte> out) const {
  if (out.size() != output_bytes()) {
    return absl::InvalidArgumentError(
        StrCat("output holds ", out.size(), " bytes, one image needs ", output_bytes()));
  }
  BRIGADE_ASSIGN_OR_RETURN(const Image image, DecodeResizeCrop(encoded));
  if (options_.output == OutputType::kFp32) {
    return normalizer_.ToFloat(
        image, std::span<float>(reinterpret_cast<float*>(out.data()), output_elements()));
  }
  return normalizer_.ToUint8(
      image, std::span<uint8_t>(reinterpret_cast<uint8_t*>(out.data()), output_elements()));
}

}  // namespace brigade::process
