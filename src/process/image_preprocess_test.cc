#include "process/image_preprocess.h"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "process/test_util.h"

namespace brigade::process {
namespace {

using ::testing::HasSubstr;
using testing::ReadTestFile;

// The references' pipeline: Resize(24) -> CenterCrop(20).
PreprocessOptions Small(OutputType output, PreprocessMode mode = PreprocessMode::kExact) {
  PreprocessOptions options;
  options.resize_shorter = 24;
  options.crop_width = 20;
  options.crop_height = 20;
  options.output = output;
  options.mode = mode;
  return options;
}

std::vector<std::byte> RunOnce(const ImagePreprocessor& p, const std::string& encoded) {
  std::vector<std::byte> out(p.output_bytes());
  absl::Status status = p.Run(encoded, out);
  EXPECT_TRUE(status.ok()) << status;
  return out;
}

class ExactModeTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ExactModeTest, ResizeAndCropGiveTorchvisionsPixelsExactly) {
  // HWC uint8 (no normalisation) is what np.asarray(CenterCrop(Resize(img))) holds.
  PreprocessOptions options = Small(OutputType::kUint8);
  options.normalize.layout = Layout::kHwc;
  absl::StatusOr<ImagePreprocessor> p = ImagePreprocessor::Create(options);
  ASSERT_TRUE(p.ok()) << p.status();
  const std::vector<std::byte> out = RunOnce(*p, ReadTestFile(GetParam()));
  const std::string want = ReadTestFile(GetParam() + ".r24c20.rgb");
  ASSERT_EQ(out.size(), want.size());
  EXPECT_EQ(std::memcmp(out.data(), want.data(), want.size()), 0);
}

INSTANTIATE_TEST_SUITE_P(Files, ExactModeTest,
                         ::testing::Values("baseline.jpg", "progressive.jpg", "grey.jpg",
                                           "rgb8.png", "rgba8.png", "grey8.png", "rgb16.png",
                                           "grey16.png"));

TEST(ImagePreprocessTest, ExactFp32IsTorchvisionsTensorBitForBit) {
  absl::StatusOr<ImagePreprocessor> p = ImagePreprocessor::Create(Small(OutputType::kFp32));
  ASSERT_TRUE(p.ok());
  const std::vector<std::byte> out = RunOnce(*p, ReadTestFile("baseline.jpg"));
  const std::string want = ReadTestFile("baseline.jpg.r24c20.f32");
  ASSERT_EQ(out.size(), want.size());
  std::vector<float> got(out.size() / 4);
  std::vector<float> ref(want.size() / 4);
  std::memcpy(got.data(), out.data(), out.size());
  std::memcpy(ref.data(), want.data(), want.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], ref[i]) << i;
}

TEST(ImagePreprocessTest, FastModeStaysCloseToTheReference) {
  absl::StatusOr<ImagePreprocessor> p =
      ImagePreprocessor::Create(Small(OutputType::kFp32, PreprocessMode::kFast));
  ASSERT_TRUE(p.ok());
  const std::vector<std::byte> out = RunOnce(*p, ReadTestFile("baseline.jpg"));
  const std::string want = ReadTestFile("baseline.jpg.r24c20.f32");
  double total = 0;
  for (size_t i = 0; i < out.size() / 4; ++i) {
    float a = 0;
    float b = 0;
    std::memcpy(&a, out.data() + 4 * i, 4);
    std::memcpy(&b, want.data() + 4 * i, 4);
    total += std::abs(a - b);
  }
  const double mean_abs = total / (out.size() / 4);
  // Normalised units (1/255/std ~ 0.017 per grey level): within a few levels on average, and
  // not identical (it did decode at half size).
  EXPECT_LT(mean_abs, 0.1);
  EXPECT_GT(mean_abs, 0.0);
}

TEST(ImagePreprocessTest, GeometryIsTorchvisions) {
  absl::StatusOr<ImagePreprocessor> p = ImagePreprocessor::Create(PreprocessOptions{});
  ASSERT_TRUE(p.ok());
  absl::StatusOr<PreprocessGeometry> g = p->Geometry({640, 480});
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->resized_width, 341);  // int(256 * 640 / 480)
  EXPECT_EQ(g->resized_height, 256);
  EXPECT_EQ(g->crop.x, 58);  // round(58.5) = 58, half to even
  EXPECT_EQ(g->crop.y, 16);
  g = p->Geometry({1080, 1920});  // portrait
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->resized_width, 256);
  EXPECT_EQ(g->resized_height, 455);
  EXPECT_EQ(g->crop.y, 116);  // round(115.5) = 116
  g = p->Geometry({300, 300});
  EXPECT_EQ(g->crop.x, 16);

  PreprocessOptions direct;
  direct.resize_shorter = 0;
  direct.crop_width = 32;
  direct.crop_height = 16;
  g = ImagePreprocessor::Create(direct)->Geometry({640, 480});
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->resized_width, 32);
  EXPECT_EQ(g->resized_height, 16);
  EXPECT_EQ(g->crop.x, 0);

  EXPECT_THAT(p->Geometry({1, 1000}).status().message(), HasSubstr("too elongated"));
}

TEST(ImagePreprocessTest, RefusesInconsistentOptions) {
  PreprocessOptions options;
  options.resize_shorter = 200;  // smaller than the 224 crop
  EXPECT_EQ(ImagePreprocessor::Create(options).status().code(), absl::StatusCode::kInvalidArgument);
  options = PreprocessOptions{};
  options.crop_width = 0;
  EXPECT_FALSE(ImagePreprocessor::Create(options).ok());
  options = PreprocessOptions{};
  options.max_pixels = 0;
  EXPECT_FALSE(ImagePreprocessor::Create(options).ok());
  options = PreprocessOptions{};
  options.normalize.std = {1, 0, 1};
  EXPECT_FALSE(ImagePreprocessor::Create(options).ok());
}

TEST(ImagePreprocessTest, BadImagesAndWrongOutputSizesAreInvalidArgument) {
  absl::StatusOr<ImagePreprocessor> p = ImagePreprocessor::Create(Small(OutputType::kFp32));
  ASSERT_TRUE(p.ok());
  std::vector<std::byte> out(p->output_bytes());
  EXPECT_THAT(p->Run("not an image", out).message(), HasSubstr("unsupported image format"));
  const std::string jpeg = ReadTestFile("baseline.jpg");
  EXPECT_THAT(p->Run(jpeg.substr(0, jpeg.size() / 2), out).message(), HasSubstr("truncated"));
  std::vector<std::byte> wrong(out.size() - 4);
  EXPECT_EQ(p->Run(jpeg, wrong).code(), absl::StatusCode::kInvalidArgument);

  PreprocessOptions limited = Small(OutputType::kFp32);
  limited.max_pixels = 1000;
  EXPECT_THAT(ImagePreprocessor::Create(limited)->Run(jpeg, out).message(),
              HasSubstr("exceeds the limit of 1000 pixels"));
}

TEST(ImagePreprocessTest, OutputSizeFollowsTheType) {
  EXPECT_EQ(ImagePreprocessor::Create(PreprocessOptions{})->output_bytes(), 224 * 224 * 3 * 4u);
  PreprocessOptions bytes;
  bytes.output = OutputType::kUint8;
  EXPECT_EQ(ImagePreprocessor::Create(bytes)->output_bytes(), 224 * 224 * 3u);
}

}  // namespace
}  // namespace brigade::process
