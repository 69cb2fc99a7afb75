#include "process/png_decoder.h"

#include <zlib.h>

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

void PutU32(std::string* s, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) (*s)[at + i] = static_cast<char>(v >> (24 - 8 * i));
}

// Rewrites IHDR's width and height (and its CRC, so only the size is wrong).
std::string WithSize(std::string png, uint32_t width, uint32_t height) {
  // Signature (8), length (4), "IHDR" (4), then width and height; the CRC follows the 13 bytes.
  PutU32(&png, 16, width);
  PutU32(&png, 20, height);
  const auto* type_and_data = reinterpret_cast<const Bytef*>(png.data() + 12);
  PutU32(&png, 29, static_cast<uint32_t>(crc32(0, type_and_data, 4 + 13)));
  return png;
}

class PngDecoderPilTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PngDecoderPilTest, DecodesToTheReferencePixels) {
  absl::StatusOr<Image> image = DecodePng(ReadTestFile(GetParam()), DecodeOptions{});
  ASSERT_TRUE(image.ok()) << image.status();
  EXPECT_EQ(image->width, kTestWidth);
  EXPECT_EQ(image->height, kTestHeight);
  EXPECT_EQ(std::string(image->pixels.begin(), image->pixels.end()),
            ReadTestFile(GetParam() + ".rgb"));
}

// rgba8: alpha dropped as PIL's convert("RGB"); rgb16: the high byte as PIL; grey16: the high
// byte (PIL would clip, see testdata/make_testdata.py).
INSTANTIATE_TEST_SUITE_P(Files, PngDecoderPilTest,
                         ::testing::Values("rgb8.png", "rgba8.png", "grey8.png", "rgb16.png",
                                           "grey16.png"));

TEST(PngDecoderTest, ReadsInfoFromIhdr) {
  absl::StatusOr<ImageInfo> info = ReadPngInfo(ReadTestFile("rgb16.png"));
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->width, kTestWidth);
  EXPECT_EQ(info->height, kTestHeight);
}

TEST(PngDecoderTest, RefusesTooManyPixelsFromTheHeaderAlone) {
  const std::string bomb = WithSize(ReadTestFile("rgb8.png"), 100000, 100000);
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<Image> image = DecodePng(bomb, DecodeOptions{});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(100));
  EXPECT_EQ(image.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(image.status().message(), HasSubstr("100000x100000"));
  EXPECT_THAT(image.status().message(), HasSubstr("exceeds the limit"));

  DecodeOptions exact;
  exact.max_pixels = kTestWidth * kTestHeight;
  EXPECT_TRUE(DecodePng(ReadTestFile("rgb8.png"), exact).ok());
  exact.max_pixels -= 1;
  EXPECT_EQ(DecodePng(ReadTestFile("rgb8.png"), exact).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(PngDecoderTest, DeclaredSizeLargerThanTheDataIsTruncation) {
  // Within the limit but more rows than the compressed data holds.
  absl::StatusOr<Image> image =
      DecodePng(WithSize(ReadTestFile("grey8.png"), 64, 4000), DecodeOptions{});
  EXPECT_EQ(image.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(image.status().message(), HasSubstr("corrupt or truncated"));
}

TEST(PngDecoderTest, TruncatedDataIsInvalidArgument) {
  const std::string png = ReadTestFile("rgba8.png");
  for (size_t keep : {size_t{20}, png.size() / 2, png.size() - 13}) {
    absl::StatusOr<Image> image = DecodePng(png.substr(0, keep), DecodeOptions{});
    EXPECT_EQ(image.status().code(), absl::StatusCode::kInvalidArgument) << keep;
    EXPECT_THAT(image.status().message(), HasSubstr("corrupt or truncated")) << keep;
  }
}

TEST(PngDecoderTest, BadCrcIsInvalidArgument) {
  std::string png = ReadTestFile("rgb8.png");
  png[png.size() / 2] = static_cast<char>(png[png.size() / 2] ^ 0x55);  // inside IDAT
  absl::StatusOr<Image> image = DecodePng(png, DecodeOptions{});
  EXPECT_EQ(image.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(PngDecoderTest, NotAPngIsRefusedByName) {
  EXPECT_THAT(DecodePng(ReadTestFile("baseline.jpg"), DecodeOptions{}).status().message(),
              HasSubstr("not a PNG"));
  EXPECT_THAT(DecodePng("\x89PNG", DecodeOptions{}).status().message(), HasSubstr("not a PNG"));
}

}  // namespace
}  // namespace brigade::process
