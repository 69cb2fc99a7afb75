#ifndef BRIGADE_PROCESS_IMAGE_H_
#define BRIGADE_PROCESS_IMAGE_H_

// Image: decoded pixels as the pre-processing steps pass them on: 8-bit RGB, interleaved,
// row-major (height x width x 3), rows tightly packed. ImageView borrows such pixels (or a part
// of them, through its stride) without owning them. DecodeOptions bound what a decoder may
// allocate and let the JPEG decoder scale in the DCT domain.
//
// Thread safety: values; distinct objects may be used from distinct threads, and a const Image
// may be read concurrently. Ownership: Image owns its pixels; an ImageView borrows them for as
// long as the viewed Image (or buffer) lives and is not resized. Failure: none here; the
// decoders (jpeg_decoder.h, png_decoder.h, image_decoder.h) report theirs.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace brigade::process {

inline constexpr int kChannels = 3;

// Largest image (width x height of the encoded image, before any scaling) a decoder accepts by
// default: 40 megapixels, ~120 MB of RGB. Checked on the header, before any pixel is allocated.
inline constexpr int64_t kDefaultMaxPixels = 40'000'000;

struct Image {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> pixels;  // width * height * kChannels bytes
};

struct ImageView {
  const uint8_t* pixels = nullptr;
  int width = 0;
  int height = 0;
  size_t stride_bytes = 0;  // bytes from one row to the next, >= width * kChannels

  static ImageView Of(const Image& image) {
    return {image.pixels.data(), image.width, image.height,
            static_cast<size_t>(image.width) * kChannels};
  }
  const uint8_t* row(int y) const { return pixels + static_cast<size_t>(y) * stride_bytes; }
};

// What the encoded image says about itself, read from its header alone.
struct ImageInfo {
  int width = 0;
  int height = 0;
};

struct DecodeOptions {
  // Refuse images whose header declares more than this many pixels (INVALID_ARGUMENT). Must be
  // positive.
  int64_t max_pixels = kDefaultMaxPixels;
  // JPEG only: when both are positive and the image is at least twice as large in both
  // dimensions, decode at the smallest DCT scaling factor of 1/8, 1/4 and 1/2 whose result is
  // still at least min_width x min_height. The other formats ignore them and always decode at
  // full size.
  int min_width = 0;
  int min_height = 0;
  // JPEG only: the faster, slightly less accurate integer IDCT (libjpeg's IFAST) instead of the
  // accurate one (ISLOW, which PIL uses).
  bool fast_dct = false;
  // JPEG only: replicate chroma samples instead of interpolating them ("fancy upsampling", on in
  // PIL); saves ~15% of a full-size 4:2:0 decode.
  bool fast_upsample = false;
};

}  // namespace brigade::process

#endif  // BRIGADE_PROCESS_IMAGE_H_
