#include "process/png_decoder.h"

#include <spng.h>

#include <algorithm>
#include <cstdint>
#include <memory>

#include "core/status_macros.h"
#include "core/strings.h"

namespace brigade::process {
namespace {

// Ancillary chunks libspng keeps in memory (text, iCCP, decompressed zTXt/iTXt), in total.
constexpr size_t kChunkCacheBytes = size_t{8} << 20;

struct ContextFree {
  void operator()(spng_ctx* ctx) const { spng_ctx_free(ctx); }
};
using Context = std::unique_ptr<spng_ctx, ContextFree>;

absl::Status PngError(std::string_view what, int error) {
  if (error == SPNG_EMEM) {
    return absl::ResourceExhaustedError(StrCat("PNG: out of memory ", what));
  }
  return absl::InvalidArgumentError(StrCat("PNG: ", what, ": ", spng_strerror(error)));
}

absl::StatusOr<Context> OpenPng(std::string_view data, spng_ihdr* ihdr) {
  static constexpr unsigned char kSignature[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  if (data.size() < sizeof(kSignature) ||
      !std::equal(std::begin(kSignature), std::end(kSignature),
                  reinterpret_cast<const unsigned char*>(data.data()))) {
    return absl::InvalidArgumentError("PNG: not a PNG file (bad signature)");
  }
  Context ctx(spng_ctx_new(0));
  if (ctx == nullptr) return absl::ResourceExhaustedError("PNG: cannot create a decoder");
  if (int error = spng_set_chunk_limits(ctx.get(), data.size(), kChunkCacheBytes); error != 0) {
    return PngError("setting chunk limits", error);
  }
  if (int error = spng_set_png_buffer(ctx.get(), data.data(), data.size()); error != 0) {
    return PngError("reading", error);
  }
  if (int error = spng_get_ihdr(ctx.get(), ihdr); error != 0) {
    return PngError("corrupt or truncated header", error);
  }
  return ctx;
}

}  // namespace

absl::StatusOr<ImageInfo> ReadPngInfo(std::string_view data) {
  spng_ihdr ihdr{};
  BRIGADE_ASSIGN_OR_RETURN(Context ctx, OpenPng(data, &ihdr));
  return ImageInfo{static_cast<int>(ihdr.width), static_cast<int>(ihdr.height)};
}

absl::StatusOr<Image> DecodePng(std::string_view data, const DecodeOptions& options) {
  if (options.max_pixels <= 0) {
    return absl::InvalidArgumentError(
        StrCat("max_pixels must be positive, got ", options.max_pixels));
  }
  spng_ihdr ihdr{};
  BRIGADE_ASSIGN_OR_RETURN(Context ctx, OpenPng(data, &ihdr));
  // libspng refuses zero and dimensions above 2^31 - 1, so both fit an int; their product is
  // checked here.
  const int64_t pixels = int64_t{ihdr.width} * ihdr.height;
  if (pixels > options.max_pixels) {
    return absl::InvalidArgumentError(StrCat("image of ", ihdr.width, "x", ihdr.height, " (",
                                             pixels, " pixels) exceeds the limit of ",
                                             options.max_pixels, " pixels"));
  }
  size_t size = 0;
  if (int error = spng_decoded_image_size(ctx.get(), SPNG_FMT_RGB8, &size); error != 0) {
    return PngError("unsupported format", error);
  }
  if (size != static_cast<size_t>(pixels) * kChannels) {
    return absl::InternalError(
        StrCat("PNG: libspng wants ", size, " bytes for ", ihdr.width, "x", ihdr.height, " RGB"));
  }
  Image image;
  image.width = static_cast<int>(ihdr.width);
  image.height = static_cast<int>(ihdr.height);
  image.pixels.resize(size);
  if (int error = spng_decode_image(ctx.get(), image.pixels.data(), size, SPNG_FMT_RGB8, 0);
      error != 0) {
    return PngError("corrupt or truncated data", error);
  }
  // The chunks after the image data, through IEND: a file cut short there is truncated too.
  if (int error = spng_decode_chunks(ctx.get()); error != 0) {
    return PngError("corrupt or truncated data after the image", error);
  }
  return image;
}

}  // namespace brigade::process
