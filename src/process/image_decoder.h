#ifndef BRIGADE_PROCESS_IMAGE_DECODER_H_
#define BRIGADE_PROCESS_IMAGE_DECODER_H_

// Decoding an encoded image of either supported format, told apart by its first bytes (the JPEG
// SOI marker, the PNG signature), never by a name or a declared type. See jpeg_decoder.h and
// png_decoder.h for what each accepts, its bounds (the pixel limit is checked on the header,
// before any allocation) and EXIF orientation (not applied).
//
// Thread safety: reentrant. Failure: INVALID_ARGUMENT naming the reason (unsupported format,
// corrupt or truncated data, too many pixels); the caller adds which image it was.

#include <string_view>

#include "absl/status/statusor.h"
#include "process/image.h"

namespace brigade::process {

enum class ImageFormat { kUnknown, kJpeg, kPng };

ImageFormat SniffImageFormat(std::string_view data);

absl::StatusOr<ImageInfo> ReadImageInfo(std::string_view data);

// Decodes to RGB; JPEGs may come out DCT-scaled (DecodeOptions::min_width/min_height).
absl::StatusOr<Image> DecodeImage(std::string_view data, const DecodeOptions& options);

}  // namespace brigade::process

#endif  // BRIGADE_PROCESS_IMAGE_DECODER_H_
