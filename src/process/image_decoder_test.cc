#include "process/image_decoder.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "process/test_util.h"

namespace brigade::process {
namespace {

using ::testing::HasSubstr;
using testing::ReadTestFile;

TEST(ImageDecoderTest, SniffsTheFormatFromTheFirstBytes) {
  EXPECT_EQ(SniffImageFormat(ReadTestFile("baseline.jpg")), ImageFormat::kJpeg);
  EXPECT_EQ(SniffImageFormat(ReadTestFile("grey16.png")), ImageFormat::kPng);
  EXPECT_EQ(SniffImageFormat("GIF89a"), ImageFormat::kUnknown);
  EXPECT_EQ(SniffImageFormat("\xFF\xD8"), ImageFormat::kUnknown);
  EXPECT_EQ(SniffImageFormat(""), ImageFormat::kUnknown);
}

TEST(ImageDecoderTest, DecodesEitherFormatToThePilPixels) {
  for (const char* name : {"progressive.jpg", "rgba8.png"}) {
    absl::StatusOr<Image> image = DecodeImage(ReadTestFile(name), DecodeOptions{});
    ASSERT_TRUE(image.ok()) << name << ": " << image.status();
    EXPECT_EQ(std::string(image->pixels.begin(), image->pixels.end()),
              ReadTestFile(std::string(name) + ".rgb"))
        << name;
    absl::StatusOr<ImageInfo> info = ReadImageInfo(ReadTestFile(name));
    ASSERT_TRUE(info.ok());
    EXPECT_EQ(info->width, image->width);
  }
}

TEST(ImageDecoderTest, UnknownAndEmptyInputsAreNamed) {
  EXPECT_THAT(DecodeImage("GIF89a....", DecodeOptions{}).status().message(),
              HasSubstr("unsupported image format"));
  EXPECT_THAT(DecodeImage("", DecodeOptions{}).status().message(), HasSubstr("empty image"));
  EXPECT_EQ(ReadImageInfo("BM").status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace brigade::process
