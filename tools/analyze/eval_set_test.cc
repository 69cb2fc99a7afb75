#include "tools/analyze/eval_set.h"

#include <unistd.h>

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

// A NumPy 1.0 file: magic, version, little-endian header length, the header dict padded so the
// data starts on a 64-byte boundary, then the raw little-endian data.
std::string Npy(std::string_view descr, std::string_view shape, std::string_view data) {
  std::string header = "{'descr': '" + std::string(descr) +
                       "', 'fortran_order': False, 'shape': (" + std::string(shape) + "), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string bytes = "\x93NUMPY";
  bytes += '\x01';
  bytes += '\x00';
  bytes += static_cast<char>(header.size() & 0xff);
  bytes += static_cast<char>(header.size() >> 8);
  return bytes + header + std::string(data);
}

template <typename T>
std::string Raw(const std::vector<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

// IDX: magic 0 0 <type> <ndim>, big-endian dims, data.
std::string Idx(const std::vector<uint32_t>& dims, std::string_view data) {
  std::string bytes = {'\0', '\0', '\x08', static_cast<char>(dims.size())};
  for (uint32_t dim : dims) {
    for (int shift = 24; shift >= 0; shift -= 8) bytes += static_cast<char>((dim >> shift) & 0xff);
  }
  return bytes + std::string(data);
}

class EvalSetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("eval-set-test-" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(std::string_view name, std::string_view bytes) {
    const fs::path path = dir_ / name;
    std::ofstream(path, std::ios::binary) << bytes;
    return path.string();
  }

  fs::path dir_;
};

TEST_F(EvalSetTest, LoadsIdxImagesWithLabelsAndConvertsPixelsToFloats) {
  // Three 2×2 "images" and their labels.
  const std::string images =
      Write("images.idx", Idx({3, 2, 2}, std::string("\x00\xff\x33\x66\x01\x02\x03\x04"
                                                     "\x05\x06\x07\x08",
                                                     12)));
  const std::string labels = Write("labels.idx", Idx({3}, std::string("\x09\x00\x04", 3)));
  absl::StatusOr<EvalSet> set = LoadEvalSet({.inputs_path = images, .labels_path = labels});
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->size(), 3);
  EXPECT_TRUE(set->labelled());
  EXPECT_THAT(set->labels, ElementsAre(9, 0, 4));
  EXPECT_THAT(set->description, HasSubstr("images.idx (3 × [2,2] UINT8)"));

  const double scale = DefaultScale(set->inputs.dtype(), DataType::kFp32);
  EXPECT_DOUBLE_EQ(scale, 1.0 / 255);
  // A [1, 2, 2] input row takes the 2×2 images; two examples from the first.
  absl::StatusOr<Tensor> rows = EvalRows(*set, 0, 2, DataType::kFp32, scale, {1, 2, 2}, true);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_THAT(rows->shape(), ElementsAre(2, 1, 2, 2));
  EXPECT_FLOAT_EQ(rows->values<float>()[0], 0.0f);
  EXPECT_FLOAT_EQ(rows->values<float>()[1], 1.0f);
  EXPECT_FLOAT_EQ(rows->values<float>()[2], 0.2f);
  EXPECT_FLOAT_EQ(rows->values<float>()[7], 4.0f / 255);
}

TEST_F(EvalSetTest, LoadsNpyInputsAndLabelsAndHonoursTheLimit) {
  const std::string inputs =
      Write("x.npy", Npy("<f4", "4, 3", Raw<float>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})));
  const std::string labels = Write("y.npy", Npy("<i8", "4,", Raw<int64_t>({2, 1, 0, 2})));
  absl::StatusOr<EvalSet> set =
      LoadEvalSet({.inputs_path = inputs, .labels_path = labels, .limit = 3});
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->size(), 3);
  EXPECT_THAT(set->labels, ElementsAre(2, 1, 0));
  EXPECT_DOUBLE_EQ(DefaultScale(DataType::kFp32, DataType::kFp32), 1.0);
  // Same type, no scaling: the bytes are copied as they are.
  absl::StatusOr<Tensor> row = EvalRows(*set, 2, 1, DataType::kFp32, 1.0, {3}, true);
  ASSERT_TRUE(row.ok()) << row.status();
  EXPECT_THAT(row->values<float>(), ElementsAre(6, 7, 8));
  // A model without a batch dimension gets one example of exactly its shape.
  row = EvalRows(*set, 1, 1, DataType::kFp64, 2.0, {3}, false);
  ASSERT_TRUE(row.ok()) << row.status();
  EXPECT_THAT(row->shape(), ElementsAre(3));
  EXPECT_THAT(row->values<double>(), ElementsAre(6, 8, 10));
}

TEST_F(EvalSetTest, IntegerInputsRoundScaledValues) {
  const std::string inputs = Write("x.npy", Npy("<f4", "1, 3", Raw<float>({0.4f, 0.6f, 2.5f})));
  absl::StatusOr<EvalSet> set = LoadEvalSet({.inputs_path = inputs});
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_FALSE(set->labelled());
  absl::StatusOr<Tensor> row = EvalRows(*set, 0, 1, DataType::kInt32, 10.0, {3}, true);
  ASSERT_TRUE(row.ok()) << row.status();
  EXPECT_THAT(row->values<int32_t>(), ElementsAre(4, 6, 25));
}

TEST_F(EvalSetTest, RefusesMismatches) {
  const std::string inputs = Write("x.npy", Npy("<f4", "2, 3", Raw<float>({0, 1, 2, 3, 4, 5})));
  const std::string few_labels = Write("y.npy", Npy("<i4", "1,", Raw<int32_t>({1})));
  const std::string float_labels = Write("z.npy", Npy("<f4", "2,", Raw<float>({1, 0})));
  EXPECT_THAT(LoadEvalSet({.inputs_path = inputs, .labels_path = few_labels}).status().message(),
              HasSubstr("do not give one label for each of 2 examples"));
  EXPECT_THAT(LoadEvalSet({.inputs_path = inputs, .labels_path = float_labels}).status().message(),
              HasSubstr("labels must be integers"));
  EXPECT_EQ(LoadEvalSet({.inputs_path = (dir_ / "missing.npy").string()}).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_FALSE(LoadEvalSet({}).ok());

  absl::StatusOr<EvalSet> set = LoadEvalSet({.inputs_path = inputs});
  ASSERT_TRUE(set.ok());
  EXPECT_THAT(EvalRows(*set, 0, 1, DataType::kFp32, 1, {4}, true).status().message(),
              HasSubstr("takes [4] (4 values) per example; the evaluation set has 3"));
  EXPECT_THAT(EvalRows(*set, 1, 2, DataType::kFp32, 1, {3}, true).status().message(),
              HasSubstr("outside the evaluation set"));
  EXPECT_FALSE(EvalRows(*set, 0, 2, DataType::kFp32, 1, {3}, false).ok());
  EXPECT_FALSE(EvalRows(*set, 0, 1, DataType::kBytes, 1, {3}, true).ok());
}

}  // namespace
}  // namespace brigade::analyze
