#include "optimize/dataset.h"

#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "optimize/test_util/npy_writer.h"

namespace brigade::optimize {
namespace {

using test_util::NpyBytes;
using ::testing::HasSubstr;

std::string TempPath(const std::string& name) {
  return (std::filesystem::path(::testing::TempDir()) / name).string();
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

void WriteGzip(const std::string& path, const std::string& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
  gzclose(f);
}

std::string Idx(const std::vector<uint32_t>& dims, const std::string& data) {
  std::string out{'\0', '\0', '\x08', static_cast<char>(dims.size())};
  for (uint32_t d : dims) {
    for (int s = 24; s >= 0; s -= 8) out += static_cast<char>((d >> s) & 0xff);
  }
  return out + data;
}

TEST(DatasetTest, ReadsFloat32Npy) {
  const float values[] = {0.5f, -1, 2, 3, 4, 5};
  const std::string path = TempPath("f32.npy");
  WriteFile(path, NpyBytes("<f4", "(3, 2)",
                           std::string(reinterpret_cast<const char*>(values), sizeof(values))));
  auto samples = LoadSamples(path);
  ASSERT_TRUE(samples.ok()) << samples.status();
  EXPECT_EQ(samples->shape(), (Shape{3, 2}));
  EXPECT_FLOAT_EQ(samples->values<float>()[1], -1.0f);
  EXPECT_FLOAT_EQ(samples->values<float>()[5], 5.0f);
}

TEST(DatasetTest, ScalesUint8NpyAndKeepsTheFirstSamples) {
  const std::string path = TempPath("u8.npy");
  WriteFile(path, NpyBytes("|u1", "(4, 1)", std::string("\x00\xff\x33\x66", 4)));
  DatasetOptions options;
  options.max_samples = 2;
  auto samples = LoadSamples(path, options);
  ASSERT_TRUE(samples.ok()) << samples.status();
  EXPECT_EQ(samples->shape(), (Shape{2, 1}));
  EXPECT_FLOAT_EQ(samples->values<float>()[1], 1.0f);
}

TEST(DatasetTest, ReadsGzippedIdxImagesAndLabels) {
  const std::string images = TempPath("images-idx3-ubyte.gz");
  WriteGzip(images, Idx({2, 2, 2}, std::string("\x00\x33\x66\x99\xcc\xff\x00\x00", 8)));
  auto samples = LoadSamples(images);
  ASSERT_TRUE(samples.ok()) << samples.status();
  EXPECT_EQ(samples->shape(), (Shape{2, 2, 2}));
  EXPECT_FLOAT_EQ(samples->values<float>()[5], 1.0f);
  const std::string labels = TempPath("labels-idx1-ubyte");
  WriteFile(labels, Idx({3}, std::string("\x07\x00\x09", 3)));
  auto read = LoadLabels(labels);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, (std::vector<int64_t>{7, 0, 9}));
}

TEST(DatasetTest, ErrorsNameTheFileAndTheProblem) {
  auto missing = LoadSamples(TempPath("no-such.npy"));
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("no-such.npy"));

  const std::string empty = TempPath("empty.npy");
  WriteFile(empty, NpyBytes("<f4", "(0, 4)", ""));
  EXPECT_THAT(LoadSamples(empty).status().message(), HasSubstr("no samples"));

  const std::string truncated = TempPath("truncated.npy");
  WriteFile(truncated, NpyBytes("<f4", "(10, 4)", std::string(8, '\0')));
  EXPECT_THAT(LoadSamples(truncated).status().message(), HasSubstr("truncated.npy"));

  const std::string complex = TempPath("complex.npy");
  WriteFile(complex, NpyBytes("<c8", "(1,)", std::string(8, '\0')));
  EXPECT_THAT(LoadSamples(complex).status().message(), HasSubstr("'<c8' is not supported"));

  const std::string text = TempPath("text.txt");
  WriteFile(text, "hello world");
  EXPECT_THAT(LoadSamples(text).status().message(), HasSubstr("neither a .npy file nor an IDX"));
}

TEST(DatasetTest, FitsSamplesToTheModelInput) {
  const Tensor images = *Tensor::Zeros(DataType::kFp32, Shape{5, 28, 28});
  auto fitted = FitToInput(images, {1, 28, 28}, "images", "image");
  ASSERT_TRUE(fitted.ok()) << fitted.status();
  EXPECT_EQ(fitted->shape(), (Shape{5, 1, 28, 28}));
  auto wildcard = FitToInput(images, {-1, 28}, "images", "image");
  ASSERT_TRUE(wildcard.ok()) << wildcard.status();
  EXPECT_EQ(wildcard->shape(), (Shape{5, 28, 28}));
  auto mismatch = FitToInput(images, {3, 32, 32}, "images.npy", "pixels");
  EXPECT_EQ(mismatch.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(mismatch.status().message(), HasSubstr("images.npy"));
  EXPECT_THAT(mismatch.status().message(), HasSubstr("'pixels'"));
}

}  // namespace
}  // namespace brigade::optimize
