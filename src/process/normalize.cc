#include "process/normalize.h"

#include <cmath>

#include "core/strings.h"

namespace brigade::process {
namespace {

absl::Status CheckSize(const Image& image, ChannelOrder order, size_t size) {
  const size_t pixels = static_cast<size_t>(image.width) * image.height;
  const size_t want = pixels * OutputChannels(order);
  if (size != want || image.pixels.size() != pixels * kChannels) {
    return absl::InvalidArgumentError(StrCat("normalize: output holds ", size,
                                             " elements, the image ", image.width, "x",
                                             image.height, " needs ", want));
  }
  return absl::OkStatus();
}

// Source channel of output channel c.
inline int SourceChannel(ChannelOrder order, int c) {
  return order == ChannelOrder::kBgr ? 2 - c : c;
}

template <typename T, typename Map>
void Write(const Image& image, ChannelOrder order, Layout layout, T* out, const Map& map) {
  const size_t plane = static_cast<size_t>(image.width) * image.height;
  const uint8_t* in = image.pixels.data();
  if (order == ChannelOrder::kGray) {
    for (size_t i = 0; i < plane; ++i) {
      const uint32_t luma =
          (in[3 * i] * 19595u + in[3 * i + 1] * 38470u + in[3 * i + 2] * 7471u + 0x8000u) >> 16;
      out[i] = map(0, static_cast<uint8_t>(luma));
    }
    return;
  }
  const int c0 = SourceChannel(order, 0);
  const int c2 = SourceChannel(order, 2);
  if (layout == Layout::kChw) {
    T* p0 = out;
    T* p1 = out + plane;
    T* p2 = out + 2 * plane;
    for (size_t i = 0; i < plane; ++i) {
      p0[i] = map(0, in[3 * i + c0]);
      p1[i] = map(1, in[3 * i + 1]);
      p2[i] = map(2, in[3 * i + c2]);
    }
  } else {
    for (size_t i = 0; i < plane; ++i) {
      out[3 * i + 0] = map(0, in[3 * i + c0]);
      out[3 * i + 1] = map(1, in[3 * i + 1]);
      out[3 * i + 2] = map(2, in[3 * i + c2]);
    }
  }
}

}  // namespace

absl::StatusOr<Normalizer> Normalizer::Create(const NormalizeOptions& options) {
  Normalizer normalizer(options);
  for (int c = 0; c < OutputChannels(options.order); ++c) {
    if (!std::isfinite(options.mean[c]) || !std::isfinite(options.std[c]) ||
        options.std[c] == 0.0f) {
      return absl::InvalidArgumentError(StrCat("normalize: channel ", c, " has mean ",
                                               options.mean[c], " and std ", options.std[c],
                                               " (need finite values and a non-zero std)"));
    }
    for (int v = 0; v < 256; ++v) {
      // torchvision: ToTensor divides by 255 in float32, Normalize subtracts and divides.
      const float scaled = static_cast<float>(v) / 255.0f;
      normalizer.table_[c][v] = (scaled - options.mean[c]) / options.std[c];
    }
  }
  return normalizer;
}

absl::Status Normalizer::ToFloat(const Image& image, std::span<float> out) const {
  if (absl::Status status = CheckSize(image, options_.order, out.size()); !status.ok())
    return status;
  Write(image, options_.order, options_.layout, out.data(),
        [this](int c, uint8_t v) { return table_[c][v]; });
  return absl::OkStatus();
}

absl::Status Normalizer::ToUint8(const Image& image, std::span<uint8_t> out) const {
  if (absl::Status status = CheckSize(image, options_.order, out.size()); !status.ok())
    return status;
  Write(image, options_.order, options_.layout, out.data(), [](int, uint8_t v) { return v; });
  return absl::OkStatus();
}

}  // namespace brigade::process
