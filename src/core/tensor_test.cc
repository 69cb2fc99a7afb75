#include "core/tensor.h"

#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace brigade {
namespace {

TEST(TensorTest, AllocatedStorageIsAligned) {
  for (int64_t n : {1, 3, 17, 1000}) {
    auto tensor = Tensor::Allocate(DataType::kFp32, {n});
    ASSERT_TRUE(tensor.ok());
    EXPECT_TRUE(tensor->aligned());
    EXPECT_EQ(tensor->byte_size(), static_cast<size_t>(n) * 4);
    EXPECT_EQ(tensor->num_elements(), n);
  }
}

TEST(TensorTest, NegativeOrOverflowingShapesAreInvalid) {
  EXPECT_EQ(Tensor::Allocate(DataType::kFp32, {-1, 3}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(Tensor::Allocate(DataType::kFp32, {int64_t{1} << 40, int64_t{1} << 40}).ok());
  EXPECT_EQ(Tensor::Allocate(DataType::kFp32, {int64_t{1} << 40}).status().code(),
            absl::StatusCode::kResourceExhausted);
}

TEST(TensorTest, ViewChecksByteSizeAgainstShape) {
  std::vector<float> data(6);
  auto ok = Tensor::View(DataType::kFp32, {2, 3}, data.data(), 24, nullptr);
  EXPECT_TRUE(ok.ok());
  auto bad = Tensor::View(DataType::kFp32, {2, 3}, data.data(), 20, nullptr);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("needs 24 bytes, got 20"), std::string::npos);
}

TEST(TensorTest, ViewKeepsItsOwnerAlive) {
  auto owner = std::make_shared<std::vector<float>>(std::vector<float>{1, 2, 3, 4});
  std::weak_ptr<std::vector<float>> watch = owner;
  auto view = Tensor::View(DataType::kFp32, {4}, owner->data(), 16, owner);
  ASSERT_TRUE(view.ok());
  owner.reset();
  EXPECT_FALSE(watch.expired());
  EXPECT_EQ(view->values<float>()[3], 4.0f);
  *view = Tensor();
  EXPECT_TRUE(watch.expired());
}

TEST(TensorTest, StringsRoundTrip) {
  std::vector<std::string> values = {"a", "", "hello"};
  auto tensor = Tensor::FromStrings({3}, values);
  ASSERT_TRUE(tensor.ok());
  EXPECT_EQ(tensor->byte_size(), 3u * 4 + 6);
  auto strings = tensor->StringValues();
  ASSERT_TRUE(strings.ok());
  EXPECT_EQ(std::vector<std::string>(strings->begin(), strings->end()), values);
}

TEST(TensorTest, MalformedBytesAreRejected) {
  std::string wire;
  AppendSerializedString("abc", &wire);
  auto bytes = std::as_bytes(std::span<const char>(wire.data(), wire.size()));
  EXPECT_TRUE(ValidateSerializedBytes(bytes, 1).ok());
  EXPECT_FALSE(ValidateSerializedBytes(bytes, 2).ok());           // too few elements
  EXPECT_FALSE(ValidateSerializedBytes(bytes.first(5), 1).ok());  // truncated element
  EXPECT_FALSE(ValidateSerializedBytes(bytes.first(2), 1).ok());  // truncated prefix
  wire.push_back('x');
  bytes = std::as_bytes(std::span<const char>(wire.data(), wire.size()));
  EXPECT_FALSE(ValidateSerializedBytes(bytes, 1).ok());  // trailing byte
}

TEST(TensorTest, SliceRowsSharesStorage) {
  std::vector<int32_t> values = {0, 1, 2, 3, 4, 5};
  auto tensor = Tensor::FromValues<int32_t>({3, 2}, values);
  ASSERT_TRUE(tensor.ok());
  auto rows = tensor->SliceRows(1, 2);
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->shape(), (Shape{2, 2}));
  EXPECT_EQ(rows->data(), tensor->data() + 8);
  EXPECT_EQ(rows->values<int32_t>()[0], 2);
  EXPECT_FALSE(tensor->SliceRows(2, 2).ok());
}

TEST(TensorTest, SliceRowsOfBytesFindsElementBoundaries) {
  std::vector<std::string> values = {"a", "bb", "ccc", "dddd"};
  auto tensor = Tensor::FromStrings({2, 2}, values);
  ASSERT_TRUE(tensor.ok());
  auto second = tensor->SliceRows(1, 1);
  ASSERT_TRUE(second.ok());
  auto strings = second->StringValues();
  ASSERT_TRUE(strings.ok());
  EXPECT_EQ(std::vector<std::string>(strings->begin(), strings->end()),
            (std::vector<std::string>{"ccc", "dddd"}));
}

TEST(TensorTest, ConcatRowsJoinsAlongBatch) {
  std::vector<float> a = {1, 2}, b = {3, 4, 5, 6};
  auto ta = Tensor::FromValues<float>({1, 2}, a);
  auto tb = Tensor::FromValues<float>({2, 2}, b);
  std::vector<Tensor> parts = {*ta, *tb};
  auto joined = ConcatRows(parts);
  ASSERT_TRUE(joined.ok());
  EXPECT_EQ(joined->shape(), (Shape{3, 2}));
  EXPECT_EQ(std::vector<float>(joined->values<float>().begin(), joined->values<float>().end()),
            (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST(TensorTest, ConcatRowsRefusesMismatchedRows) {
  auto ta = Tensor::Zeros(DataType::kFp32, {1, 2});
  auto tb = Tensor::Zeros(DataType::kFp32, {1, 3});
  std::vector<Tensor> parts = {*ta, *tb};
  EXPECT_EQ(ConcatRows(parts).status().code(), absl::StatusCode::kInvalidArgument);
  auto tc = Tensor::Zeros(DataType::kInt32, {1, 2});
  parts = {*ta, *tc};
  EXPECT_FALSE(ConcatRows(parts).ok());
}

TEST(TensorTest, ReshapeKeepsElementCount) {
  auto tensor = Tensor::Zeros(DataType::kUint8, {2, 6});
  EXPECT_TRUE(tensor->Reshaped({3, 4}).ok());
  EXPECT_FALSE(tensor->Reshaped({5}).ok());
}

TEST(TensorTest, CloneCopiesBytesIntoFreshStorage) {
  std::vector<double> values = {1.5, -2.5};
  auto tensor = Tensor::FromValues<double>({2}, values);
  auto clone = tensor->Clone();
  ASSERT_TRUE(clone.ok());
  EXPECT_NE(clone->data(), tensor->data());
  EXPECT_EQ(std::memcmp(clone->data(), tensor->data(), 16), 0);
}

}  // namespace
}  // namespace brigade
