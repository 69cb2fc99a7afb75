#include "process/normalize.h"

#include <vector>

#include "gtest/gtest.h"

namespace brigade::process {
namespace {

// 2x1 image: pixel 0 = (0, 128, 255), pixel 1 = (10, 20, 30).
Image TwoPixels() { return Image{2, 1, {0, 128, 255, 10, 20, 30}}; }

TEST(NormalizeTest, FloatIsTorchvisionsToTensorThenNormalize) {
  absl::StatusOr<Normalizer> normalizer = Normalizer::Create(NormalizeOptions{});
  ASSERT_TRUE(normalizer.ok());
  std::vector<float> out(6);
  ASSERT_TRUE(normalizer->ToFloat(TwoPixels(), out).ok());
  // CHW: R plane, G plane, B plane; the same float32 operations as torchvision.
  EXPECT_EQ(out[0], (0.0f / 255.0f - 0.485f) / 0.229f);
  EXPECT_EQ(out[1], (10.0f / 255.0f - 0.485f) / 0.229f);
  EXPECT_EQ(out[2], (128.0f / 255.0f - 0.456f) / 0.224f);
  EXPECT_EQ(out[5], (30.0f / 255.0f - 0.406f) / 0.225f);
}

TEST(NormalizeTest, BgrAndHwcReorderChannelsAndMeanIsPerOutputChannel) {
  NormalizeOptions options;
  options.mean = {0.0f, 0.0f, 0.0f};
  options.std = {1.0f / 255.0f, 1.0f / 255.0f, 1.0f / 255.0f};
  options.order = ChannelOrder::kBgr;
  options.layout = Layout::kHwc;
  absl::StatusOr<Normalizer> normalizer = Normalizer::Create(options);
  ASSERT_TRUE(normalizer.ok());
  std::vector<float> out(6);
  ASSERT_TRUE(normalizer->ToFloat(TwoPixels(), out).ok());
  const std::vector<float> want = {255, 128, 0, 30, 20, 10};
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(out[i], want[i], 1e-3) << i;

  std::vector<uint8_t> bytes(6);
  ASSERT_TRUE(normalizer->ToUint8(TwoPixels(), bytes).ok());
  EXPECT_EQ(bytes, (std::vector<uint8_t>{255, 128, 0, 30, 20, 10}));

  options.layout = Layout::kChw;
  options.order = ChannelOrder::kRgb;
  ASSERT_TRUE(Normalizer::Create(options)->ToUint8(TwoPixels(), bytes).ok());
  EXPECT_EQ(bytes, (std::vector<uint8_t>{0, 10, 128, 20, 255, 30}));
}

TEST(NormalizeTest, GrayIsPilsLumaNormalisedWithTheFirstMeanAndStd) {
  NormalizeOptions options;
  options.order = ChannelOrder::kGray;
  options.mean = {0.5f, 0.0f, 0.0f};
  options.std = {0.25f, 0.0f, 0.0f};  // only channel 0's values matter for one channel
  absl::StatusOr<Normalizer> normalizer = Normalizer::Create(options);
  ASSERT_TRUE(normalizer.ok()) << normalizer.status();
  // PIL: Image.new("RGB", ...) of these pixels .convert("L") gives 104, 18, 77.
  const Image image{3, 1, {0, 128, 255, 10, 20, 30, 77, 77, 77}};
  std::vector<uint8_t> bytes(3);
  ASSERT_TRUE(normalizer->ToUint8(image, bytes).ok());
  EXPECT_EQ(bytes, (std::vector<uint8_t>{104, 18, 77}));
  std::vector<float> out(3);
  ASSERT_TRUE(normalizer->ToFloat(image, out).ok());
  EXPECT_EQ(out[0], (104.0f / 255.0f - 0.5f) / 0.25f);
  EXPECT_EQ(out[2], (77.0f / 255.0f - 0.5f) / 0.25f);
  std::vector<float> three(9);
  EXPECT_EQ(normalizer->ToFloat(image, three).code(), absl::StatusCode::kInvalidArgument);
}

TEST(NormalizeTest, RefusesZeroStdAndWrongOutputSize) {
  NormalizeOptions options;
  options.std[1] = 0.0f;
  EXPECT_EQ(Normalizer::Create(options).status().code(), absl::StatusCode::kInvalidArgument);
  options = NormalizeOptions{};
  options.mean[2] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(Normalizer::Create(options).ok());
  std::vector<float> out(5);
  EXPECT_EQ(Normalizer::Create(NormalizeOptions{})->ToFloat(TwoPixels(), out).code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace brigade::process
