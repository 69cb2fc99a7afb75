#include "tools/loadgen/npy_file.h"

#include <cstring>
#include <string>

#include "gtest/gtest.h"

namespace brigade::loadgen {
namespace {

// A version 1.0 .npy file as numpy.save writes it (header padded to a multiple of 64).
std::string Npy(std::string_view dict, std::string_view data) {
  std::string header(dict);
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  std::string file("\x93NUMPY\x01\x00", 8);
  file.push_back(static_cast<char>(header.size() & 0xff));
  file.push_back(static_cast<char>(header.size() >> 8));
  file += header;
  file += data;
  return file;
}

TEST(NpyFileTest, ReadsFloatArrays) {
  const float values[6] = {0, 1, 2, 3, 4, 5};
  const std::string file =
      Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
          std::string_view(reinterpret_cast<const char*>(values), sizeof(values)));
  absl::StatusOr<Tensor> tensor = ParseNpy(file, "x.npy");
  ASSERT_TRUE(tensor.ok()) << tensor.status();
  EXPECT_EQ(tensor->dtype(), DataType::kFp32);
  EXPECT_EQ(tensor->shape(), (Shape{2, 3}));
  EXPECT_EQ(tensor->values<float>()[5], 5.0f);
}

TEST(NpyFileTest, ReadsScalarsAndOneDimensionalShapes) {
  const uint8_t bytes[3] = {7, 8, 9};
  absl::StatusOr<Tensor> vector =
      ParseNpy(Npy("{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }",
                   std::string_view(reinterpret_cast<const char*>(bytes), 3)),
               "v.npy");
  ASSERT_TRUE(vector.ok()) << vector.status();
  EXPECT_EQ(vector->shape(), (Shape{3}));
  const int64_t scalar_value = -4;
  absl::StatusOr<Tensor> scalar =
      ParseNpy(Npy("{'descr': '<i8', 'fortran_order': False, 'shape': (), }",
                   std::string_view(reinterpret_cast<const char*>(&scalar_value), 8)),
               "s.npy");
  ASSERT_TRUE(scalar.ok()) << scalar.status();
  EXPECT_TRUE(scalar->shape().empty());
  EXPECT_EQ(scalar->values<int64_t>()[0], -4);
}

TEST(NpyFileTest, RefusesWhatItCannotReadNamingTheFile) {
  const std::string data(8, '\0');
  struct Case {
    std::string file;
    std::string_view reason;
  };
  const Case cases[] = {
      {"not numpy at all", "magic"},
      {Npy("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", data), ">f4"},
      {Npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", data), "Fortran"},
      {Npy("{'descr': '<U3', 'fortran_order': False, 'shape': (2,), }", data), "<U3"},
      {Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", data), "f.npy"},
  };
  for (const Case& c : cases) {
    absl::Status status = ParseNpy(c.file, "f.npy").status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.reason;
    EXPECT_NE(status.message().find(std::string(c.reason)), std::string::npos) << status.message();
  }
}

}  // namespace
}  // namespace brigade::loadgen
