#include "pipeline/classification.h"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::pipeline {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> Strings(const absl::StatusOr<Tensor>& tensor) {
  EXPECT_TRUE(tensor.ok()) << tensor.status();
  if (!tensor.ok()) return {};
  const absl::StatusOr<std::vector<std::string_view>> values = tensor->StringValues();
  EXPECT_TRUE(values.ok()) << values.status();
  if (!values.ok()) return {};
  return std::vector<std::string>(values->begin(), values->end());
}

TEST(ClassificationTest, TopKPerRowWithLabelsWhereTheFileHasThem) {
  const std::vector<float> values = {1, 5, 10, 4,   // row 0: Triton's own example
                                     0, 0, 2,  2};  // row 1: a tie, broken by index
  const Tensor output = *Tensor::FromValues<float>({2, 4}, values);
  const std::vector<std::string> labels = {"zero", "one", "two"};  // no line for index 3
  absl::StatusOr<Tensor> top = Classify("logits", output, 2, /*batched=*/true, labels);
  ASSERT_TRUE(top.ok()) << top.status();
  EXPECT_EQ(top->shape(), (Shape{2, 2}));
  EXPECT_EQ(top->dtype(), DataType::kBytes);
  EXPECT_THAT(Strings(top),
              ElementsAre("10.000000:2:two", "5.000000:1:one", "2.000000:2:two", "2.000000:3"));
}

TEST(ClassificationTest, KIsClippedToTheClassesAndUnbatchedOutputsGiveOneRow) {
  const std::vector<int32_t> values = {-3, 7, 0};
  const Tensor output = *Tensor::FromValues<int32_t>({3}, values);
  absl::StatusOr<Tensor> top = Classify("scores", output, 10, /*batched=*/false, {});
  ASSERT_TRUE(top.ok()) << top.status();
  EXPECT_EQ(top->shape(), (Shape{3}));
  EXPECT_THAT(Strings(top), ElementsAre("7:1", "0:2", "-3:0"));
}

TEST(ClassificationTest, ComparesInTheOutputsTypeAndRanksNanLast) {
  const std::vector<uint8_t> bytes = {200, 7, 255};
  EXPECT_THAT(Strings(Classify("u8", *Tensor::FromValues<uint8_t>({1, 3}, bytes), 1, true, {})),
              ElementsAre("255:2"));
  const std::vector<double> doubles = {std::nan(""), 0.5, -1};
  EXPECT_THAT(Strings(Classify("f64", *Tensor::FromValues<double>({3}, doubles), 3, false, {})),
              ElementsAre("0.500000:1", "-1.000000:2", "nan:0"));
  // FP16 1.0 = 0x3c00, 2.5 = 0x4100; BF16 -2.0 = 0xc000, 3.0 = 0x4040.
  const std::vector<uint16_t> half = {0x3c00, 0x4100};
  Tensor fp16 = *Tensor::Allocate(DataType::kFp16, {2});
  std::memcpy(fp16.mutable_data(), half.data(), 4);
  EXPECT_THAT(Strings(Classify("h", fp16, 2, false, {})), ElementsAre("2.500000:1", "1.000000:0"));
  const std::vector<uint16_t> brain = {0xc000, 0x4040};
  Tensor bf16 = *Tensor::Allocate(DataType::kBf16, {2});
  std::memcpy(bf16.mutable_data(), brain.data(), 4);
  EXPECT_THAT(Strings(Classify("b", bf16, 1, false, {})), ElementsAre("3.000000:1"));
}

TEST(ClassificationTest, RefusesNonNumericOutputsAndNonPositiveCounts) {
  const Tensor text = *Tensor::FromStrings({1}, std::vector<std::string>{"a"});
  EXPECT_THAT(std::string(Classify("names", text, 1, false, {}).status().message()),
              HasSubstr("output 'names': classification needs a numeric output, not BYTES"));
  const std::vector<float> one = {1};
  const Tensor scores = *Tensor::FromValues<float>({1}, one);
  EXPECT_THAT(std::string(Classify("s", scores, 0, false, {}).status().message()),
              HasSubstr("classification count 0 is not a positive integer"));
}

}  // namespace
}  // namespace brigade::pipeline
