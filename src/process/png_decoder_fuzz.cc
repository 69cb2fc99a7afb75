// libFuzzer target: the PNG decoder must accept or refuse any bytes without crashing, reading
// out of bounds, or allocating past the pixel limit; what it accepts must have the size IHDR
// declares. The whole input is the PNG (the seeds are the committed test images). libspng
// checks CRCs, so most mutations stop there; the fuzzer also tries each input with its CRCs
// recomputed, which carries mutations into the zlib stream and the filters. Build: see
// CMakeLists.txt (BRIGADE_FUZZ).

#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "process/png_decoder.h"

namespace {

uint32_t ReadU32(const std::string& s, size_t at) {
  return (uint32_t{static_cast<uint8_t>(s[at])} << 24) |
         (uint32_t{static_cast<uint8_t>(s[at + 1])} << 16) |
         (uint32_t{static_cast<uint8_t>(s[at + 2])} << 8) |
         uint32_t{static_cast<uint8_t>(s[at + 3])};
}

// Recomputes every complete chunk's CRC.
std::string Resealed(std::string png) {
  size_t at = 8;
  while (at + 12 <= png.size()) {
    const uint32_t length = ReadU32(png, at);
    if (length > png.size() - at - 12) break;
    const uint32_t crc = crc32(0, reinterpret_cast<const Bytef*>(png.data() + at + 4), length + 4);
    for (int i = 0; i < 4; ++i) png[at + 8 + length + i] = static_cast<char>(crc >> (24 - 8 * i));
    at += 12 + length;
  }
  return png;
}

void Decode(const std::string& input) {
  namespace process = brigade::process;
  process::DecodeOptions options;
  options.max_pixels = 1 << 20;
  absl::StatusOr<process::ImageInfo> info = process::ReadPngInfo(input);
  absl::StatusOr<process::Image> image = process::DecodePng(input, options);
  if (!image.ok()) return;
  if (!info.ok() || info->width != image->width || info->height != image->height ||
      int64_t{image->width} * image->height > options.max_pixels ||
      image->pixels.size() != static_cast<size_t>(image->width) * image->height * 3) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  Decode(input);
  Decode(Resealed(input));
  return 0;
}
