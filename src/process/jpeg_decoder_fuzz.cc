// libFuzzer target: the JPEG decoder must accept or refuse any bytes without crashing, reading
// out of bounds, or allocating past the pixel limit; what it accepts must have the size it
// reports. The whole input is the JPEG (the seeds are the committed test images); its length
// picks the DCT scaling, the IDCT and the chroma upsampling, so every decode path is fuzzed.
// The limit is kept small so a large declared size is refused instead of slowly decoded.
// Build: see CMakeLists.txt (BRIGADE_FUZZ).

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "process/jpeg_decoder.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  namespace process = brigade::process;
  process::DecodeOptions options;
  options.max_pixels = 1 << 20;
  if (size % 3 == 1) {
    options.min_width = 8;
    options.min_height = 8;
  }
  options.fast_dct = size % 2 == 1;
  options.fast_upsample = size % 4 >= 2;
  absl::StatusOr<process::ImageInfo> info = process::ReadJpegInfo(input);
  absl::StatusOr<process::Image> image = process::DecodeJpeg(input, options);
  if (image.ok()) {
    if (!info.ok() || image->width <= 0 || image->height <= 0 ||
        image->pixels.size() != static_cast<size_t>(image->width) * image->height * 3 ||
        int64_t{info->width} * info->height > options.max_pixels) {
      std::abort();
    }
    const process::ImageInfo want = process::JpegDecodedSize(*info, options);
    if (want.width != image->width || want.height != image->height) std::abort();
  }
  return 0;
}
