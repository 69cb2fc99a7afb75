#include "core/data_type.h"

#include "gtest/gtest.h"

namespace brigade {
namespace {

TEST(DataTypeTest, EveryTypeRoundTripsThroughBothSpellings) {
  for (int i = 1; i < kNumDataTypes; ++i) {
    const auto type = static_cast<DataType>(i);
    EXPECT_EQ(ParseDataType(DataTypeName(type)), type) << DataTypeName(type);
    EXPECT_EQ(ParseConfigDataType(DataTypeConfigName(type)), type) << DataTypeConfigName(type);
  }
}

TEST(DataTypeTest, SizesFollowTheProtocolTable) {
  EXPECT_EQ(DataTypeSize(DataType::kBool), 1u);
  EXPECT_EQ(DataTypeSize(DataType::kUint8), 1u);
  EXPECT_EQ(DataTypeSize(DataType::kInt16), 2u);
  EXPECT_EQ(DataTypeSize(DataType::kFp16), 2u);
  EXPECT_EQ(DataTypeSize(DataType::kBf16), 2u);
  EXPECT_EQ(DataTypeSize(DataType::kFp32), 4u);
  EXPECT_EQ(DataTypeSize(DataType::kUint32), 4u);
  EXPECT_EQ(DataTypeSize(DataType::kInt64), 8u);
  EXPECT_EQ(DataTypeSize(DataType::kFp64), 8u);
  EXPECT_EQ(DataTypeSize(DataType::kBytes), 0u);
}

TEST(DataTypeTest, BytesIsTypeStringInConfigs) {
  EXPECT_EQ(ParseConfigDataType("TYPE_STRING"), DataType::kBytes);
  EXPECT_EQ(DataTypeName(DataType::kBytes), "BYTES");
}

TEST(DataTypeTest, UnknownAndWrongCaseNamesAreRejected) {
  EXPECT_FALSE(ParseDataType("fp32").has_value());
  EXPECT_FALSE(ParseDataType("FLOAT").has_value());
  EXPECT_FALSE(ParseDataType("INVALID").has_value());
  EXPECT_FALSE(ParseConfigDataType("FP32").has_value());
}

}  // namespace
}  // namespace brigade
