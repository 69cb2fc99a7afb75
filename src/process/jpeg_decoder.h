#ifndef BRIGADE_PROCESS_JPEG_DECODER_H_
#define BRIGADE_PROCESS_JPEG_DECODER_H_

// JPEG decoding with libjpeg-turbo's TurboJPEG API (Debian 12 ships 2.1: tjDecompress2), to
// 8-bit RGB. Baseline and progressive, YCbCr, RGB and greyscale JPEGs; CMYK/YCCK are refused.
// The accurate integer IDCT and fancy upsampling are the defaults, as in PIL (which links the
// same libjpeg-turbo), so a full-size decode gives PIL's pixels exactly.
//
// DCT-domain scaling: with DecodeOptions::min_width/min_height set, the image is decoded at 1/8,
// 1/4 or 1/2 of its size when that is still at least the minimum, which skips most of the
// IDCT and upsampling work (see image.h).
//
// EXIF orientation is NOT applied: pixels come out as stored, as PIL's Image.open gives them
// (torchvision's transforms do not apply it either).
//
// Bounds: the header's width x height is checked against max_pixels before anything is
// allocated, so a "decompression bomb" (a small file declaring a huge image) allocates nothing;
// the output and libjpeg's own buffers are then proportional to that bounded size. Progressive
// files are limited to 500 scans (TJFLAG_LIMITSCANS), which bounds their decode time.
//
// Thread safety: reentrant, no shared state (each call has its own TurboJPEG handle).
// Failure: INVALID_ARGUMENT naming the reason: not a JPEG, corrupt or truncated data (libjpeg's
// warnings are errors here, TJFLAG_STOPONWARNING), an unsupported colour space, too many pixels.
// RESOURCE_EXHAUSTED if TurboJPEG cannot get memory.

#include <string_view>

#include "absl/status/statusor.h"
#include "process/image.h"

namespace brigade::process {

// Reads the width and height from the header; decodes nothing.
absl::StatusOr<ImageInfo> ReadJpegInfo(std::string_view data);

absl::StatusOr<Image> DecodeJpeg(std::string_view data, const DecodeOptions& options);

// The size DecodeJpeg produces for an image of `info` under `options` (the DCT scaling choice).
ImageInfo JpegDecodedSize(const ImageInfo& info, const DecodeOptions& options);

}  // namespace brigade::process

#endif  // BRIGADE_PROCESS_JPEG_DECODER_H_
