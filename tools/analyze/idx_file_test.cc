#include "tools/analyze/idx_file.h"

#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::analyze {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// An IDX header: magic 0 0 <type> <ndim>, big-endian dims.
std::string Header(uint8_t type, const std::vector<uint32_t>& dims) {
  std::string bytes = {'\0', '\0', static_cast<char>(type), static_cast<char>(dims.size())};
  for (uint32_t dim : dims) {
    for (int shift = 24; shift >= 0; shift -= 8) bytes += static_cast<char>((dim >> shift) & 0xff);
  }
  return bytes;
}

fs::path TempPath(std::string_view name) {
  return fs::temp_directory_path() / (std::to_string(getpid()) + "-" + std::string(name));
}

TEST(ParseIdxTest, ReadsUnsignedBytesWithTheirShape) {
  const std::string bytes = Header(0x08, {2, 3}) + std::string("\x01\x02\x03\x04\x05\xff", 6);
  absl::StatusOr<Tensor> tensor = ParseIdx(bytes, "images");
  ASSERT_TRUE(tensor.ok()) << tensor.status();
  EXPECT_EQ(tensor->dtype(), DataType::kUint8);
  EXPECT_THAT(tensor->shape(), ElementsAre(2, 3));
  EXPECT_THAT(tensor->values<uint8_t>(), ElementsAre(1, 2, 3, 4, 5, 255));
}

TEST(ParseIdxTest, SwapsBigEndianElementsToHostOrder) {
  const std::string ints = Header(0x0C, {2}) + std::string("\x00\x00\x01\x02\xff\xff\xff\xfe", 8);
  absl::StatusOr<Tensor> tensor = ParseIdx(ints, "ints");
  ASSERT_TRUE(tensor.ok()) << tensor.status();
  EXPECT_THAT(tensor->values<int32_t>(), ElementsAre(258, -2));

  // 1.5f is 0x3FC00000.
  const std::string floats = Header(0x0D, {1}) + std::string("\x3f\xc0\x00\x00", 4);
  tensor = ParseIdx(floats, "floats");
  ASSERT_TRUE(tensor.ok()) << tensor.status();
  EXPECT_THAT(tensor->values<float>(), ElementsAre(1.5f));
}

TEST(ParseIdxTest, RefusesBadMagicUnknownTypeAndWrongSizes) {
  EXPECT_THAT(ParseIdx("PK\x03\x04", "zip").status().message(), HasSubstr("bad magic"));
  EXPECT_THAT(ParseIdx(Header(0x07, {1}) + "x", "t").status().message(),
              HasSubstr("unknown IDX element type 0x07"));
  EXPECT_THAT(ParseIdx(Header(0x08, {4}).substr(0, 6), "t").status().message(),
              HasSubstr("truncated"));
  EXPECT_THAT(ParseIdx(Header(0x08, {4}) + "abc", "short").status().message(),
              HasSubstr("holds 3 bytes"));
  EXPECT_THAT(ParseIdx(Header(0x08, {2}) + "abc", "long").status().message(),
              HasSubstr("holds 3 bytes"));
  // Dims whose product overflows are refused, not allocated.
  EXPECT_FALSE(ParseIdx(Header(0x08, {0xffffffff, 0xffffffff, 0xffffffff}), "huge").ok());
}

TEST(ReadIdxFileTest, ReadsGzipCompressedAndPlainFilesAlike) {
  const std::string bytes = Header(0x08, {3}) + "\x07\x08\x09";
  const fs::path plain = TempPath("plain.idx");
  std::ofstream(plain, std::ios::binary) << bytes;
  const fs::path packed = TempPath("packed.idx.gz");
  gzFile file = gzopen(packed.c_str(), "wb");
  ASSERT_NE(file, nullptr);
  gzwrite(file, bytes.data(), static_cast<unsigned>(bytes.size()));
  gzclose(file);

  for (const fs::path& path : {plain, packed}) {
    absl::StatusOr<Tensor> tensor = ReadIdxFile(path.string());
    ASSERT_TRUE(tensor.ok()) << path << ": " << tensor.status();
    EXPECT_THAT(tensor->values<uint8_t>(), ElementsAre(7, 8, 9));
  }
  EXPECT_GT(fs::file_size(plain), 0u);
  fs::remove(plain);
  fs::remove(packed);
  EXPECT_EQ(ReadIdxFile(plain.string()).status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace brigade::analyze
