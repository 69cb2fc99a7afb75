#include "route/row_assembly.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace brigade::route {
namespace {

TEST(RowAssemblyTest, OneRunOfOnePartIsAViewOfIt) {
  const std::vector<int32_t> values = {0, 1, 2, 3, 4, 5, 6, 7};
  const Tensor part = *Tensor::FromValues<int32_t>({4, 2}, values);
  const RowRef rows[] = {{0, 1}, {0, 2}};
  absl::StatusOr<Tensor> out = AssembleRows({&part, 1}, rows);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->data(), part.data() + 2 * sizeof(int32_t));
  EXPECT_EQ(out->shape(), (Shape{2, 2}));
}

TEST(RowAssemblyTest, RowsOfTwoPartsInterleaveInTheOrderGiven) {
  const Tensor a = *Tensor::FromValues<int32_t>({3, 1}, std::vector<int32_t>{0, 1, 2});
  const Tensor b = *Tensor::FromValues<int32_t>({2, 1}, std::vector<int32_t>{10, 11});
  const Tensor parts[] = {a, b};
  const RowRef rows[] = {{0, 0}, {1, 0}, {0, 2}, {1, 1}};
  absl::StatusOr<Tensor> out = AssembleRows(parts, rows);
  ASSERT_TRUE(out.ok()) << out.status();
  std::span<const int32_t> got = out->values<int32_t>();
  EXPECT_EQ(std::vector<int32_t>(got.begin(), got.end()), (std::vector<int32_t>{0, 10, 2, 11}));
}

TEST(RowAssemblyTest, BytesRowsOfDifferentLengthsKeepTheirElements) {
  const std::vector<std::string> mine = {"a", "bbbb", "cc"};
  const std::vector<std::string> theirs = {"", "zzzzzz"};
  const Tensor parts[] = {*Tensor::FromStrings({3, 1}, mine), *Tensor::FromStrings({2, 1}, theirs)};
  const RowRef rows[] = {{1, 1}, {0, 1}, {1, 0}, {0, 2}};
  absl::StatusOr<Tensor> out = AssembleRows(parts, rows);
  ASSERT_TRUE(out.ok()) << out.status();
  absl::StatusOr<std::vector<std::string_view>> got = out->StringValues();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, (std::vector<std::string_view>{"zzzzzz", "bbbb", "", "cc"}));
}

TEST(RowAssemblyTest, BadRowsAndMismatchedPartsAreRefused) {
  const Tensor a = *Tensor::FromValues<int32_t>({2, 1}, std::vector<int32_t>{0, 1});
  const Tensor wide = *Tensor::FromValues<int32_t>({1, 2}, std::vector<int32_t>{0, 1});
  const Tensor scalar = *Tensor::FromValues<int32_t>({}, std::vector<int32_t>{0});
  const RowRef past[] = {{0, 2}};
  EXPECT_EQ(AssembleRows({&a, 1}, past).status().code(), absl::StatusCode::kInvalidArgument);
  const RowRef other_part[] = {{1, 0}};
  EXPECT_EQ(AssembleRows({&a, 1}, other_part).status().message(), "row 0 names part 1 of 1");
  const Tensor parts[] = {a, wide};
  const RowRef both[] = {{0, 0}, {1, 0}};
  EXPECT_EQ(AssembleRows(parts, both).status().code(), absl::StatusCode::kInvalidArgument);
  const RowRef first[] = {{0, 0}};
  EXPECT_EQ(AssembleRows({&scalar, 1}, first).status().message(),
            "part 0 is a scalar: it has no rows");
  EXPECT_EQ(AssembleRows({&a, 1}, {}).status().message(), "no row to assemble");
}

}  // namespace
}  // namespace brigade::route
