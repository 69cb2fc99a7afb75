#include "process/image_decoder.h"

#include "process/jpeg_decoder.h"
#include "process/png_decoder.h"

namespace brigade::process {
namespace {

absl::Status Unsupported(std::string_view data) {
  if (data.empty()) return absl::InvalidArgumentError("empty image");
  return absl::InvalidArgumentError("unsupported image format (expected JPEG or PNG)");
}

}  // namespace

ImageFormat SniffImageFormat(std::string_view data) {
  if (data.size() >= 3 && data.substr(0, 3) == "\xFF\xD8\xFF") return ImageFormat::kJpeg;
  if (data.size() >= 8 && data.substr(0, 8) == "\x89PNG\r\n\x1A\n") return ImageFormat::kPng;
  return ImageFormat::kUnknown;
}

absl::StatusOr<ImageInfo> ReadImageInfo(std::string_view data) {
  switch (SniffImageFormat(data)) {
    case ImageFormat::kJpeg:
      return ReadJpegInfo(data);
    case ImageFormat::kPng:
      return ReadPngInfo(data);
    case ImageFormat::kUnknown:
      break;
  }
  return Unsupported(data);
}

absl::StatusOr<Image> DecodeImage(std::string_view data, const DecodeOptions& options) {
  switch (SniffImageFormat(data)) {
    case ImageFormat::kJpeg:
      return DecodeJpeg(data, options);
    case ImageFormat::kPng:
      return DecodePng(data, options);
    case ImageFormat::kUnknown:
      break;
  }
  return Unsupported(data);
}

}  // namespace brigade::process
