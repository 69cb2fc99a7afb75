#include "serve/http/body_buffer.h"

#include <cstdint>
#include <string>

#include "gtest/gtest.h"

namespace brigade::serve {
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

}  // namespace
}  // namespace brigade::serve
