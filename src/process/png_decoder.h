#ifndef BRIGADE_PROCESS_PNG_DECODER_H_
#define BRIGADE_PROCESS_PNG_DECODER_H_

// PNG decoding with libspng, to 8-bit RGB: every colour type (grey, grey+alpha, palette, RGB,
// RGBA) and bit depth (1 to 16), interlaced or not. Alpha is dropped, not composited, and gamma
// is not applied: what PIL's Image.open(...).convert("RGB") gives for 8-bit images and for
// 16-bit RGB (the high byte of each sample). 16-bit greyscale also keeps the high byte, where
// PIL (mode "I") clips every value above 255 to white.
//
// EXIF orientation (an eXIf chunk) is NOT applied; no PNG viewer agrees on it anyway.
//
// Bounds: width x height from IHDR is checked against max_pixels before anything is allocated;
// chunks cannot be larger than the input, and the memory libspng may spend on ancillary chunks
// (text, ICC profiles, decompressed zTXt/iTXt) is capped at 8 MiB.
//
// Thread safety: reentrant, no shared state (each call has its own libspng context).
// Failure: INVALID_ARGUMENT naming the reason: not a PNG, corrupt (bad CRC, bad zlib stream,
// invalid IHDR) or truncated data, too many pixels. RESOURCE_EXHAUSTED if libspng cannot get
// memory.

#include <string_view>

#include "absl/status/statusor.h"
#include "process/image.h"

namespace brigade::process {

// Reads the width and height from IHDR; decodes nothing.
absl::StatusOr<ImageInfo> ReadPngInfo(std::string_view data);

// Decodes at full size (DecodeOptions' JPEG-only fields are ignored).
absl::StatusOr<Image> DecodePng(std::string_view data, const DecodeOptions& options);

}  // namespace brigade::process

#endif  // BRIGADE_PROCESS_PNG_DECODER_H_
