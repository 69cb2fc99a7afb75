#include "engine/torch/torch_tensor.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::engine {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(TorchScalarTypeTest, EveryTorchRepresentableTypeRoundTrips) {
  int representable = 0;
  for (int i = 1; i < kNumDataTypes; ++i) {
    const auto type = static_cast<DataType>(i);
    const std::optional<c10::ScalarType> torch_type = ToTorchScalarType(type);
    if (!torch_type) continue;
    ++representable;
    EXPECT_EQ(FromTorchScalarType(*torch_type), type) << DataTypeName(type);
    EXPECT_EQ(c10::elementSize(*torch_type), DataTypeSize(type)) << DataTypeName(type);
  }
  EXPECT_EQ(representable, 10);
  EXPECT_EQ(ToTorchScalarType(DataType::kUint32), std::nullopt);
  EXPECT_EQ(ToTorchScalarType(DataType::kBytes), std::nullopt);
  EXPECT_EQ(FromTorchScalarType(c10::ScalarType::ComplexFloat), std::nullopt);
}

TEST(ToTorchTest, WrapsWithoutCopying) {
  auto tensor = Tensor::FromValues<int64_t>({2, 3}, std::vector<int64_t>{1, 2, 3, 4, 5, 6});
  ASSERT_TRUE(tensor.ok());
  auto wrapped = ToTorch(*tensor);
  ASSERT_TRUE(wrapped.ok()) << wrapped.status();
  EXPECT_EQ(wrapped->data_ptr(), static_cast<const void*>(tensor->data()));
  EXPECT_EQ(wrapped->scalar_type(), c10::ScalarType::Long);
  EXPECT_THAT(wrapped->sizes(), ElementsAre(2, 3));
  EXPECT_EQ(wrapped->index({1, 2}).item<int64_t>(), 6);
}

TEST(ToTorchTest, TorchTensorKeepsBrigadeStorageAlive) {
  at::Tensor wrapped;
  {
    auto tensor = Tensor::FromValues<float>({3}, std::vector<float>{7, 8, 9});
    ASSERT_TRUE(tensor.ok());
    auto result = ToTorch(*tensor);
    ASSERT_TRUE(result.ok());
    wrapped = *std::move(result);
  }
  EXPECT_EQ(wrapped.sum().item<float>(), 24.0f);
}

TEST(ToTorchTest, RefusesTypesWithoutTorchEquivalent) {
  auto tensor = Tensor::Zeros(DataType::kUint16, {2});
  ASSERT_TRUE(tensor.ok());
  auto wrapped = ToTorch(*tensor);
  ASSERT_FALSE(wrapped.ok());
  EXPECT_EQ(wrapped.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(wrapped.status().message(), HasSubstr("UINT16"));
}

TEST(FromTorchTest, WrapsContiguousTensorWithoutCopying) {
  at::Tensor source = torch::arange(6, torch::kFloat32).reshape({2, 3});
  const void* data = source.data_ptr();
  auto tensor = FromTorch(source);
  ASSERT_TRUE(tensor.ok()) << tensor.status();
  EXPECT_EQ(static_cast<const void*>(tensor->data()), data);
  EXPECT_EQ(tensor->dtype(), DataType::kFp32);
  EXPECT_THAT(tensor->shape(), ElementsAre(2, 3));
  EXPECT_THAT(tensor->values<float>(), ElementsAre(0, 1, 2, 3, 4, 5));
}

TEST(FromTorchTest, StridedViewComesOutRowMajor) {
  at::Tensor transposed = torch::arange(6, torch::kInt32).reshape({2, 3}).t();
  auto tensor = FromTorch(transposed);
  ASSERT_TRUE(tensor.ok()) << tensor.status();
  EXPECT_THAT(tensor->shape(), ElementsAre(3, 2));
  EXPECT_THAT(tensor->values<int32_t>(), ElementsAre(0, 3, 1, 4, 2, 5));
}

TEST(FromTorchTest, ScalarAndEmptyTensorsConvert) {
  auto scalar = FromTorch(torch::tensor(3.5, torch::kFloat64));
  ASSERT_TRUE(scalar.ok()) << scalar.status();
  EXPECT_TRUE(scalar->shape().empty());
  EXPECT_THAT(scalar->values<double>(), ElementsAre(3.5));
  auto empty = FromTorch(torch::zeros({0, 4}));
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->byte_size(), 0u);
  EXPECT_THAT(empty->shape(), ElementsAre(0, 4));
}

TEST(FromTorchTest, RefusesUndefinedAndComplexTensors) {
  EXPECT_EQ(FromTorch(at::Tensor()).status().code(), absl::StatusCode::kInvalidArgument);
  auto complex = FromTorch(torch::zeros({2}, torch::kComplexFloat));
  ASSERT_FALSE(complex.ok());
  EXPECT_THAT(complex.status().message(), HasSubstr("ComplexFloat"));
}

}  // namespace
}  // namespace brigade::engine
