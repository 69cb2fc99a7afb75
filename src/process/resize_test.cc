#include "process/resize.h"

#include <algorithm>
#include <cstdint>
#include <random>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::process {
namespace {

Image RandomImage(int width, int height, uint32_t seed) {
  std::mt19937 rng(seed);
  Image image{width, height, std::vector<uint8_t>(static_cast<size_t>(width) * height * 3)};
  for (uint8_t& p : image.pixels) p = static_cast<uint8_t>(rng());
  return image;
}

uint8_t At(const Image& image, int x, int y, int c) {
  return image.pixels[(static_cast<size_t>(y) * image.width + x) * 3 + c];
}

// PIL's two passes written the plain way, from the same coefficients: the reference for the
// vectorized passes (eight rows at a time, padded taps, edge windows moved inside the row).
Image NaiveResize(const Image& in, int out_w, int out_h, ResizeFilter filter) {
  auto clip = [](int64_t v) { return static_cast<uint8_t>(std::clamp<int64_t>(v >> 22, 0, 255)); };
  const ResampleAxis h = ComputeResampleAxis(in.width, out_w, 0, out_w, filter);
  Image mid{out_w, in.height, std::vector<uint8_t>(static_cast<size_t>(out_w) * in.height * 3)};
  for (int y = 0; y < in.height; ++y) {
    for (int x = 0; x < out_w; ++x) {
      for (int c = 0; c < 3; ++c) {
        int64_t sum = 1 << 21;
        for (int t = 0; t < h.taps[x]; ++t) {
          sum += int64_t{At(in, h.first[x] + t, y, c)} * h.weights[x * h.max_taps + t];
        }
        mid.pixels[(static_cast<size_t>(y) * out_w + x) * 3 + c] = clip(sum);
      }
    }
  }
  const ResampleAxis v = ComputeResampleAxis(in.height, out_h, 0, out_h, filter);
  Image out{out_w, out_h, std::vector<uint8_t>(static_cast<size_t>(out_w) * out_h * 3)};
  for (int y = 0; y < out_h; ++y) {
    for (int x = 0; x < out_w; ++x) {
      for (int c = 0; c < 3; ++c) {
        int64_t sum = 1 << 21;
        for (int t = 0; t < v.taps[y]; ++t) {
          sum += int64_t{At(mid, x, v.first[y] + t, c)} * v.weights[y * v.max_taps + t];
        }
        out.pixels[(static_cast<size_t>(y) * out_w + x) * 3 + c] = clip(sum);
      }
    }
  }
  return out;
}

TEST(ResizeTest, VectorizedPassesEqualThePlainAlgorithm) {
  // Scales from 1.3x to 20x (3 to 41 taps, the unrolled and the run-time tap counts), odd row
  // counts (the rows left over after groups of eight), both filters.
  const Image image = RandomImage(301, 203, 6);
  for (ResizeFilter filter : {ResizeFilter::kBilinear, ResizeFilter::kArea}) {
    for (auto [w, h] : {std::pair(230, 157), std::pair(97, 61), std::pair(37, 23),
                        std::pair(15, 11), std::pair(400, 29)}) {
      absl::StatusOr<Image> fast = ResizeWindow(ImageView::Of(image), w, h, {0, 0, w, h}, filter);
      ASSERT_TRUE(fast.ok()) << fast.status();
      const Image want = NaiveResize(image, w, h, filter);
      ASSERT_EQ(fast->pixels, want.pixels) << w << "x" << h;
    }
  }
}

TEST(ResizeTest, WeightsOfEveryOutputSumToOneInFixedPoint) {
  for (ResizeFilter filter : {ResizeFilter::kBilinear, ResizeFilter::kArea}) {
    for (auto [in, out] : {std::pair(640, 341), std::pair(480, 256), std::pair(10, 37)}) {
      const ResampleAxis axis = ComputeResampleAxis(in, out, 0, out, filter);
      for (int i = 0; i < out; ++i) {
        int64_t sum = 0;
        for (int t = 0; t < axis.taps[i]; ++t) sum += axis.weights[i * axis.max_taps + t];
        EXPECT_NEAR(sum, 1 << kResamplePrecisionBits, axis.taps[i]) << in << "->" << out;
        EXPECT_GE(axis.first[i], 0);
        EXPECT_LE(axis.first[i] + axis.taps[i], in);
      }
    }
  }
}

TEST(ResizeTest, DownscalingWidensTheBilinearSupport) {
  // 4x smaller: each output sees ~8 source pixels (antialias), not the 2 of plain bilinear.
  const ResampleAxis axis = ComputeResampleAxis(400, 100, 50, 1, ResizeFilter::kBilinear);
  EXPECT_EQ(axis.taps[0], 8);
  EXPECT_EQ(axis.first[0], 198);
}

TEST(ResizeTest, WindowEqualsTheSameRegionOfTheWholeResize) {
  const Image image = RandomImage(97, 61, 1);
  for (ResizeFilter filter : {ResizeFilter::kBilinear, ResizeFilter::kArea}) {
    absl::StatusOr<Image> whole =
        ResizeWindow(ImageView::Of(image), 40, 25, {0, 0, 40, 25}, filter);
    ASSERT_TRUE(whole.ok()) << whole.status();
    const Window window{7, 3, 20, 19};
    absl::StatusOr<Image> part = ResizeWindow(ImageView::Of(image), 40, 25, window, filter);
    ASSERT_TRUE(part.ok()) << part.status();
    for (int y = 0; y < window.height; ++y) {
      for (int x = 0; x < window.width; ++x) {
        for (int c = 0; c < 3; ++c) {
          ASSERT_EQ(At(*part, x, y, c), At(*whole, x + window.x, y + window.y, c));
        }
      }
    }
  }
}

TEST(ResizeTest, AreaHalvingAveragesEachTwoByTwoBlock) {
  const Image image = RandomImage(16, 12, 2);
  absl::StatusOr<Image> half =
      ResizeWindow(ImageView::Of(image), 8, 6, {0, 0, 8, 6}, ResizeFilter::kArea);
  ASSERT_TRUE(half.ok());
  for (int y = 0; y < 6; ++y) {
    for (int x = 0; x < 8; ++x) {
      for (int c = 0; c < 3; ++c) {
        // Two rounded passes: within one of the exact block mean.
        const double row0 = (At(image, 2 * x, 2 * y, c) + At(image, 2 * x + 1, 2 * y, c)) / 2.0;
        const double row1 =
            (At(image, 2 * x, 2 * y + 1, c) + At(image, 2 * x + 1, 2 * y + 1, c)) / 2.0;
        EXPECT_NEAR(At(*half, x, y, c), (row0 + row1) / 2, 1.0);
      }
    }
  }
}

TEST(ResizeTest, ConstantImagesStayConstantAndSameSizeIsACopy) {
  Image grey{30, 20, std::vector<uint8_t>(30 * 20 * 3, 77)};
  absl::StatusOr<Image> small =
      ResizeWindow(ImageView::Of(grey), 11, 7, {0, 0, 11, 7}, ResizeFilter::kBilinear);
  ASSERT_TRUE(small.ok());
  for (uint8_t p : small->pixels) ASSERT_EQ(p, 77);
  absl::StatusOr<Image> big =
      ResizeWindow(ImageView::Of(grey), 90, 50, {3, 4, 80, 40}, ResizeFilter::kBilinear);
  ASSERT_TRUE(big.ok());
  for (uint8_t p : big->pixels) ASSERT_EQ(p, 77);

  const Image image = RandomImage(13, 9, 3);
  absl::StatusOr<Image> same =
      ResizeWindow(ImageView::Of(image), 13, 9, {2, 1, 10, 7}, ResizeFilter::kBilinear);
  ASSERT_TRUE(same.ok());
  for (int y = 0; y < 7; ++y) {
    for (int x = 0; x < 10; ++x) ASSERT_EQ(At(*same, x, y, 1), At(image, x + 2, y + 1, 1));
  }
}

TEST(ResizeTest, ResizesOneAxisOnly) {
  const Image image = RandomImage(20, 10, 4);
  absl::StatusOr<Image> narrow =
      ResizeWindow(ImageView::Of(image), 10, 10, {0, 0, 10, 10}, ResizeFilter::kArea);
  ASSERT_TRUE(narrow.ok());
  EXPECT_NEAR(At(*narrow, 3, 5, 2), (At(image, 6, 5, 2) + At(image, 7, 5, 2)) / 2.0, 0.5 + 1e-9);
  absl::StatusOr<Image> short_image =
      ResizeWindow(ImageView::Of(image), 20, 5, {0, 0, 20, 5}, ResizeFilter::kArea);
  ASSERT_TRUE(short_image.ok());
  EXPECT_NEAR(At(*short_image, 3, 2, 0), (At(image, 3, 4, 0) + At(image, 3, 5, 0)) / 2.0,
              0.5 + 1e-9);
}

TEST(ResizeTest, RefusesBadSizesAndWindows) {
  const Image image = RandomImage(8, 8, 5);
  const ImageView view = ImageView::Of(image);
  EXPECT_FALSE(ResizeWindow(view, 0, 4, {0, 0, 1, 1}, ResizeFilter::kBilinear).ok());
  EXPECT_FALSE(
      ResizeWindow(view, kMaxResizeDimension + 1, 4, {0, 0, 1, 1}, ResizeFilter::kBilinear).ok());
  EXPECT_FALSE(ResizeWindow(view, 4, 4, {1, 0, 4, 4}, ResizeFilter::kBilinear).ok());
  EXPECT_FALSE(ResizeWindow(view, 4, 4, {0, 0, 0, 4}, ResizeFilter::kBilinear).ok());
  EXPECT_FALSE(ResizeWindow(view, 4, 4, {-1, 0, 2, 2}, ResizeFilter::kBilinear).ok());
  EXPECT_FALSE(ResizeWindow(ImageView{}, 4, 4, {0, 0, 4, 4}, ResizeFilter::kBilinear).ok());
}

}  // namespace
}  // namespace brigade::process
