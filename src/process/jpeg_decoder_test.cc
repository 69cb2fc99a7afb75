#include "process/jpeg_decoder.h"

#include <chrono>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "process/test_util.h"

namespace brigade::process {
namespace {

using ::testing::HasSubstr;
using testing::kTestHeight;
using testing::kTestWidth;
using testing::ReadTestFile;

std::string Pixels(const Image& image) {
  return std::string(image.pixels.begin(), image.pixels.end());
}

// Rewrites the frame size in a JPEG's first SOF0/SOF2 marker.
std::string WithFrameSize(std::string jpeg, int width, int height) {
  for (size_t i = 2; i + 9 < jpeg.size(); ++i) {
    const auto marker = static_cast<uint8_t>(jpeg[i + 1]);
    if (static_cast<uint8_t>(jpeg[i]) == 0xFF && (marker == 0xC0 || marker == 0xC2)) {
      jpeg[i + 5] = static_cast<char>(height >> 8);
      jpeg[i + 6] = static_cast<char>(height & 0xFF);
      jpeg[i + 7] = static_cast<char>(width >> 8);
      jpeg[i + 8] = static_cast<char>(width & 0xFF);
      return jpeg;
    }
  }
  ADD_FAILURE() << "no SOF marker";
  return jpeg;
}

class JpegDecoderPilTest : public ::testing::TestWithParam<std::string> {};

TEST_P(JpegDecoderPilTest, FullSizeDecodeGivesPilsPixelsExactly) {
  const std::string jpeg = ReadTestFile(GetParam());
  absl::StatusOr<Image> image = DecodeJpeg(jpeg, DecodeOptions{});
  ASSERT_TRUE(image.ok()) << image.status();
  EXPECT_EQ(image->width, kTestWidth);
  EXPECT_EQ(image->height, kTestHeight);
  EXPECT_EQ(Pixels(*image), ReadTestFile(GetParam() + ".rgb"));
}

INSTANTIATE_TEST_SUITE_P(Files, JpegDecoderPilTest,
                         ::testing::Values("baseline.jpg", "progressive.jpg", "grey.jpg"));

TEST(JpegDecoderTest, ReadsInfoFromTheHeader) {
  absl::StatusOr<ImageInfo> info = ReadJpegInfo(ReadTestFile("progressive.jpg"));
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->width, kTestWidth);
  EXPECT_EQ(info->height, kTestHeight);
}

TEST(JpegDecoderTest, DctScalingPicksTheSmallestFactorStillAtLeastTheMinimum) {
  const ImageInfo full{640, 480};
  auto size = [&](int w, int h) {
    DecodeOptions options;
    options.min_width = w;
    options.min_height = h;
    const ImageInfo out = JpegDecodedSize(full, options);
    return std::pair(out.width, out.height);
  };
  EXPECT_EQ(size(80, 60), std::pair(80, 60));      // 1/8
  EXPECT_EQ(size(81, 60), std::pair(160, 120));    // 1/4
  EXPECT_EQ(size(224, 224), std::pair(320, 240));  // 1/2
  EXPECT_EQ(size(341, 256), std::pair(640, 480));  // more than half: full size
  EXPECT_EQ(size(0, 0), std::pair(640, 480));      // not asked
  // TJSCALED rounds up: 1/8 of 1921 is 241.
  EXPECT_EQ(JpegDecodedSize({1921, 1081}, {.min_width = 241, .min_height = 136}).width, 241);
}

TEST(JpegDecoderTest, ScaledDecodeHasTheScaledSizeAndStaysCloseToTheFullImage) {
  const std::string jpeg = ReadTestFile("baseline.jpg");
  DecodeOptions options;
  options.min_width = 32;
  options.min_height = 24;
  absl::StatusOr<Image> half = DecodeJpeg(jpeg, options);
  ASSERT_TRUE(half.ok()) << half.status();
  ASSERT_EQ(half->width, 32);
  ASSERT_EQ(half->height, 24);
  // Each scaled pixel is close to the mean of the 2x2 block it replaces.
  absl::StatusOr<Image> full = DecodeJpeg(jpeg, DecodeOptions{});
  ASSERT_TRUE(full.ok());
  double total = 0;
  for (int y = 0; y < 24; ++y) {
    for (int x = 0; x < 32; ++x) {
      for (int c = 0; c < 3; ++c) {
        auto at = [&](int yy, int xx) { return full->pixels[(yy * 64 + xx) * 3 + c]; };
        const double mean = (at(2 * y, 2 * x) + at(2 * y, 2 * x + 1) + at(2 * y + 1, 2 * x) +
                             at(2 * y + 1, 2 * x + 1)) /
                            4.0;
        total += std::abs(mean - half->pixels[(y * 32 + x) * 3 + c]);
      }
    }
  }
  EXPECT_LT(total / (32 * 24 * 3), 6.0);
}

TEST(JpegDecoderTest, RefusesTooManyPixelsFromTheHeaderAlone) {
  // A 1.6 KB file claiming 65000 x 65000 (4.2 gigapixels): refused before any allocation, at
  // once, even though the data could never fill such an image.
  const std::string bomb = WithFrameSize(ReadTestFile("baseline.jpg"), 65000, 65000);
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<Image> image = DecodeJpeg(bomb, DecodeOptions{});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(100));
  EXPECT_EQ(image.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(image.status().message(), HasSubstr("65000x65000"));
  EXPECT_THAT(image.status().message(), HasSubstr("exceeds the limit of 40000000 pixels"));

  DecodeOptions small;
  small.max_pixels = kTestWidth * kTestHeight - 1;
  EXPECT_THAT(DecodeJpeg(ReadTestFile("baseline.jpg"), small).status().message(),
              HasSubstr("exceeds the limit of 3071 pixels"));
  small.max_pixels = kTestWidth * kTestHeight;
  EXPECT_TRUE(DecodeJpeg(ReadTestFile("baseline.jpg"), small).ok());
}

TEST(JpegDecoderTest, TruncatedDataIsInvalidArgument) {
  const std::string jpeg = ReadTestFile("progressive.jpg");
  for (size_t keep : {jpeg.size() / 2, jpeg.size() - 10}) {
    absl::StatusOr<Image> image = DecodeJpeg(jpeg.substr(0, keep), DecodeOptions{});
    EXPECT_EQ(image.status().code(), absl::StatusCode::kInvalidArgument) << keep;
    EXPECT_THAT(image.status().message(), HasSubstr("corrupt or truncated")) << keep;
  }
  EXPECT_THAT(DecodeJpeg(jpeg.substr(0, 40), DecodeOptions{}).status().message(),
              HasSubstr("header"));
}

TEST(JpegDecoderTest, CorruptEntropyDataIsInvalidArgument) {
  std::string jpeg = ReadTestFile("baseline.jpg");
  // Overwrite the middle of the scan with marker-like garbage.
  for (size_t i = jpeg.size() / 2; i < jpeg.size() / 2 + 64; ++i) jpeg[i] = '\xFF';
  absl::StatusOr<Image> image = DecodeJpeg(jpeg, DecodeOptions{});
  EXPECT_EQ(image.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(JpegDecoderTest, NotAJpegAndCmykAreRefusedByName) {
  EXPECT_THAT(DecodeJpeg(ReadTestFile("rgb8.png"), DecodeOptions{}).status().message(),
              HasSubstr("not a JPEG"));
  EXPECT_THAT(DecodeJpeg("", DecodeOptions{}).status().message(), HasSubstr("not a JPEG"));
  absl::StatusOr<Image> cmyk = DecodeJpeg(ReadTestFile("cmyk.jpg"), DecodeOptions{});
  EXPECT_EQ(cmyk.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(cmyk.status().message(), HasSubstr("unsupported colour space CMYK"));
}

TEST(JpegDecoderTest, NonPositivePixelLimitIsRefused) {
  DecodeOptions options;
  options.max_pixels = 0;
  EXPECT_EQ(DecodeJpeg(ReadTestFile("baseline.jpg"), options).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace brigade::process
