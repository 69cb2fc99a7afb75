#include "engine/onnx/loader/tensor_proto.h"

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"

namespace brigade::engine::onnx {
namespace {

namespace fs = std::filesystem;
using ::onnx::TensorProto;

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() /
            ("brigade_tp_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
             "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(path_);
    fs::create_directories(path_ / "model");
  }
  ~TempDir() { fs::remove_all(path_); }
  fs::path model_dir() const { return path_ / "model"; }
  fs::path root() const { return path_; }

 private:
  fs::path path_;
};

void WriteFile(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

TEST(TensorProtoTest, ReadsRawData) {
  TensorProto p;
  p.set_name("w");
  p.set_data_type(TensorProto::FLOAT);
  p.add_dims(2);
  const float values[] = {1.5f, -2.0f};
  p.set_raw_data(reinterpret_cast<const char*>(values), sizeof(values));
  auto t = TensorFromProto(p, "");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->shape(), Shape{2});
  EXPECT_EQ(t->values<float>()[1], -2.0f);
}

TEST(TensorProtoTest, ReadsTypedFields) {
  TensorProto p;
  p.set_data_type(TensorProto::INT8);
  p.add_dims(3);
  p.add_int32_data(-1);
  p.add_int32_data(2);
  p.add_int32_data(127);
  auto t = TensorFromProto(p, "");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->values<int8_t>()[0], -1);
  EXPECT_EQ(t->values<int8_t>()[2], 127);
}

TEST(TensorProtoTest, RejectsRawDataOfTheWrongSize) {
  TensorProto p;
  p.set_name("short");
  p.set_data_type(TensorProto::FLOAT);
  p.add_dims(1000);
  p.set_raw_data(std::string(12, '\0'));
  auto t = TensorFromProto(p, "");
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(t.status().message()).find("short"), std::string::npos);
}

TEST(TensorProtoTest, RejectsHugeAndNegativeShapes) {
  TensorProto p;
  p.set_data_type(TensorProto::FLOAT);
  p.add_dims(int64_t{1} << 40);
  p.add_dims(int64_t{1} << 40);
  EXPECT_FALSE(TensorFromProto(p, "").ok());
  TensorProto n;
  n.set_data_type(TensorProto::FLOAT);
  n.add_dims(-3);
  EXPECT_FALSE(TensorFromProto(n, "").ok());
}

TEST(TensorProtoTest, NormalizesRawBoolsToZeroOrOne) {
  TensorProto p;
  p.set_data_type(TensorProto::BOOL);
  p.add_dims(2);
  p.set_raw_data(std::string("\x00\x07", 2));
  auto t = TensorFromProto(p, "");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(static_cast<int>(t->data()[1]), 1);
}

TensorProto External(const std::string& location, int64_t offset = 0) {
  TensorProto p;
  p.set_name("ext");
  p.set_data_type(TensorProto::FLOAT);
  p.add_dims(2);
  p.set_data_location(TensorProto::EXTERNAL);
  auto* loc = p.add_external_data();
  loc->set_key("location");
  loc->set_value(location);
  auto* off = p.add_external_data();
  off->set_key("offset");
  off->set_value(std::to_string(offset));
  return p;
}

TEST(TensorProtoTest, ReadsExternalDataInsideTheModelDirectory) {
  TempDir dir;
  const float values[] = {0.0f, 3.0f, 4.0f};
  WriteFile(dir.model_dir() / "weights.bin",
            std::string(reinterpret_cast<const char*>(values), sizeof(values)));
  auto t = TensorFromProto(External("weights.bin", 4), dir.model_dir().string());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->values<float>()[0], 3.0f);
  EXPECT_EQ(t->values<float>()[1], 4.0f);
}

TEST(TensorProtoTest, RefusesExternalDataEscapingTheModelDirectory) {
  TempDir dir;
  WriteFile(dir.root() / "secret.bin", std::string(8, 'x'));
  EXPECT_EQ(TensorFromProto(External("../secret.bin"), dir.model_dir().string()).status().code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_FALSE(
      TensorFromProto(External((dir.root() / "secret.bin").string()), dir.model_dir().string())
          .ok());
  fs::create_symlink(dir.root() / "secret.bin", dir.model_dir() / "link.bin");
  EXPECT_EQ(TensorFromProto(External("link.bin"), dir.model_dir().string()).status().code(),
            absl::StatusCode::kPermissionDenied);
}

TEST(TensorProtoTest, RefusesExternalDataPastTheEndOfTheFile) {
  TempDir dir;
  WriteFile(dir.model_dir() / "small.bin", std::string(8, '\0'));
  EXPECT_EQ(TensorFromProto(External("small.bin", 4), dir.model_dir().string()).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(TensorProtoTest, RefusesExternalDataWithoutAModelDirectory) {
  EXPECT_FALSE(TensorFromProto(External("weights.bin"), "").ok());
}

TEST(TensorProtoTest, RoundTripsThroughTensorToProto) {
  auto original = Tensor::FromValues<int64_t>(Shape{3}, std::vector<int64_t>{5, -6, 7});
  ASSERT_TRUE(original.ok());
  TensorProto p;
  TensorToProto(*original, "v", &p);
  auto back = TensorFromProto(p, "");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->values<int64_t>()[1], -6);
}

}  // namespace
}  // namespace brigade::engine::onnx
