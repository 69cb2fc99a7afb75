#include "protocol/http/body_buffer.h"

#include <cstdint>
#include <cstring>
#include <string>

#include "gtest/gtest.h"

namespace brigade::protocol::http {
namespace {

TEST(BodyBufferTest, AlignsTheChosenByteAndZeroesThePadding) {
  for (size_t offset : {0, 1, 7, 63, 64, 100}) {
    auto buffer = BodyBuffer::Allocate(200, offset);
    ASSERT_NE(buffer, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer->data() + offset) % BodyBuffer::kAlignment, 0u)
        << offset;
    for (size_t i = 0; i < BodyBuffer::kPaddingBytes; ++i) {
      EXPECT_EQ(buffer->data()[200 + i], std::byte{0});
    }
  }
}

TEST(BodyBufferTest, FromStringCopiesTheBytes) {
  auto buffer = BodyBuffer::FromString("hello", 3);
  ASSERT_NE(buffer, nullptr);
  EXPECT_EQ(buffer->view(), "hello");
  EXPECT_EQ(buffer->size(), 5u);
  EXPECT_EQ(BodyBuffer::Empty()->size(), 0u);
}

TEST(BodyBufferTest, AppendGrowsUpToTheLimit) {
  auto buffer = BodyBuffer::Allocate(2);
  const std::string chunk(3000, 'x');
  const auto bytes = std::as_bytes(std::span<const char>(chunk));
  EXPECT_TRUE(buffer->Append(bytes, 10000));
  EXPECT_TRUE(buffer->Append(bytes, 10000));
  EXPECT_TRUE(buffer->Append(bytes, 10000));
  EXPECT_EQ(buffer->size(), 9000u);
  EXPECT_FALSE(buffer->Append(bytes, 10000));  // would pass the limit: nothing appended
  EXPECT_EQ(buffer->size(), 9000u);
  EXPECT_EQ(buffer->view(), std::string(9000, 'x'));
  EXPECT_EQ(buffer->data()[buffer->capacity()], std::byte{0});
}

// A chunked body grows by Append into spare capacity that holds garbage; the padding after the
// body must still be zeros (an unclosed JSON body followed by a stray ',' sent simdjson's
// On-Demand parser past its index).
TEST(BodyBufferTest, ThePaddingAfterTheBodyIsZeroedAfterAppendAndCommit) {
  auto buffer = BodyBuffer::Allocate(8);
  const std::string chunk(3000, '{');
  const auto bytes = std::as_bytes(std::span<const char>(chunk));
  ASSERT_TRUE(buffer->Append(bytes, 100000));
  std::memset(buffer->write_ptr(), ',', buffer->available());  // what an allocation may hold
  ASSERT_TRUE(buffer->Append(bytes.first(7), 100000));
  for (size_t i = 0; i < BodyBuffer::kPaddingBytes; ++i) {
    ASSERT_EQ(buffer->data()[buffer->size() + i], std::byte{0}) << "after Append, byte " << i;
  }
  std::memset(buffer->write_ptr(), ',', buffer->available());
  buffer->write_ptr()[0] = std::byte{'}'};
  buffer->Commit(1);
  EXPECT_EQ(buffer->view().back(), '}');
  for (size_t i = 0; i < BodyBuffer::kPaddingBytes; ++i) {
    ASSERT_EQ(buffer->data()[buffer->size() + i], std::byte{0}) << "after Commit, byte " << i;
  }
}

TEST(BodyBufferTest, ABudgetedBufferChargesItsGrowthAndReturnsItAtTheEnd) {
  MemoryBudget budget(10000);
  {
    auto buffer = BodyBuffer::Allocate(1000, 0, budget.TryCharge(1000));
    ASSERT_NE(buffer, nullptr);
    EXPECT_EQ(budget.in_use(), 1000u);
    const std::string chunk(3000, 'x');
    ASSERT_TRUE(buffer->Append(std::as_bytes(std::span<const char>(chunk)), 100000));
    EXPECT_EQ(budget.in_use(), buffer->capacity());
    EXPECT_EQ(buffer->charged_bytes(), buffer->capacity());
  }
  EXPECT_EQ(budget.in_use(), 0u);
}

TEST(BodyBufferTest, GrowthPastTheBudgetIsRefusedAndSaysSo) {
  MemoryBudget budget(5000);
  auto buffer = BodyBuffer::Allocate(0, 0, budget.TryCharge(0));
  ASSERT_NE(buffer, nullptr);
  const std::string chunk(4000, 'x');
  const auto bytes = std::as_bytes(std::span<const char>(chunk));
  ASSERT_TRUE(buffer->Append(bytes, 100000));
  EXPECT_FALSE(buffer->Append(bytes, 100000));  // 8000 would pass the 5000-byte budget
  EXPECT_TRUE(buffer->budget_refused());
  EXPECT_EQ(buffer->size(), 4000u);
  EXPECT_LE(budget.in_use(), budget.limit());
}

TEST(BodyBufferTest, AnUnbudgetedBufferIsNeverRefusedByABudget) {
  auto buffer = BodyBuffer::Allocate(100);
  ASSERT_NE(buffer, nullptr);
  EXPECT_EQ(buffer->charged_bytes(), 100u);  // without a budget the charge only keeps count
  EXPECT_FALSE(buffer->budget_refused());
}

}  // namespace
}  // namespace brigade::protocol::http
