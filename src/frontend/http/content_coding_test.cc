#include "frontend/http/content_coding.h"

#include <zlib.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::frontend {
namespace {

using ::testing::HasSubstr;
using ::testing::Optional;

std::span<const std::byte> Bytes(std::string_view text) {
  return std::as_bytes(std::span<const char>(text.data(), text.size()));
}

std::string Compress(ContentCoding coding, std::string_view text) {
  const std::span<const std::byte> pieces[] = {Bytes(text)};
  return DeflateBody(coding, pieces);
}

// Raw deflate (no zlib header), as some clients send for "deflate".
std::string RawDeflate(std::string_view text) {
  z_stream stream{};
  EXPECT_EQ(deflateInit2(&stream, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&stream, text.size()), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  stream.avail_in = static_cast<uInt>(text.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&stream, Z_FINISH), Z_STREAM_END);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

absl::StatusOr<std::string> Inflate(ContentCoding coding, std::string_view compressed,
                                    size_t max_bytes = size_t{64} << 20) {
  absl::StatusOr<std::shared_ptr<protocol::http::BodyBuffer>> body =
      InflateBody(coding, Bytes(compressed), max_bytes, 0);
  if (!body.ok()) return body.status();
  return std::string((*body)->view());
}

std::string Sample() {
  std::string text = R"({"inputs":[{"name":"x","shape":[2,3],"datatype":"FP32","data":[)";
  for (int i = 0; i < 2000; ++i) text += std::to_string(i % 17) + ".5,";
  text += "0]}]}";
  return text;
}

TEST(ParseContentEncodingTest, KnowsIdentityGzipAndDeflateInAnyCase) {
  EXPECT_THAT(ParseContentEncoding("identity"), Optional(ContentCoding::kIdentity));
  EXPECT_THAT(ParseContentEncoding("GZIP"), Optional(ContentCoding::kGzip));
  EXPECT_THAT(ParseContentEncoding("x-gzip"), Optional(ContentCoding::kGzip));
  EXPECT_THAT(ParseContentEncoding(" deflate\t"), Optional(ContentCoding::kDeflate));
}

TEST(ParseContentEncodingTest, RefusesOtherCodingsAndStackedOnes) {
  EXPECT_EQ(ParseContentEncoding("br"), std::nullopt);
  EXPECT_EQ(ParseContentEncoding("compress"), std::nullopt);
  EXPECT_EQ(ParseContentEncoding("gzip, deflate"), std::nullopt);
  EXPECT_EQ(ParseContentEncoding(""), std::nullopt);
}

TEST(NegotiateResponseCodingTest, AnswersIdentityUnlessGzipOrDeflateIsAcceptable) {
  EXPECT_EQ(NegotiateResponseCoding(std::nullopt), ContentCoding::kIdentity);
  EXPECT_EQ(NegotiateResponseCoding(""), ContentCoding::kIdentity);
  EXPECT_EQ(NegotiateResponseCoding("br, identity"), ContentCoding::kIdentity);
  EXPECT_EQ(NegotiateResponseCoding("gzip;q=0, deflate;q=0"), ContentCoding::kIdentity);
  EXPECT_EQ(NegotiateResponseCoding("*;q=0"), ContentCoding::kIdentity);
  EXPECT_EQ(NegotiateResponseCoding("gzip;q=garbage"), ContentCoding::kIdentity);
}

TEST(NegotiateResponseCodingTest, PicksTheHighestQualityAndGzipOnATie) {
  EXPECT_EQ(NegotiateResponseCoding("gzip"), ContentCoding::kGzip);
  EXPECT_EQ(NegotiateResponseCoding("deflate"), ContentCoding::kDeflate);
  EXPECT_EQ(NegotiateResponseCoding("deflate, gzip"), ContentCoding::kGzip);
  EXPECT_EQ(NegotiateResponseCoding("gzip;q=0.5, deflate;q=0.8"), ContentCoding::kDeflate);
  EXPECT_EQ(NegotiateResponseCoding("gzip;q=0, deflate"), ContentCoding::kDeflate);
  EXPECT_EQ(NegotiateResponseCoding("br;q=1.0, *;q=0.1"), ContentCoding::kGzip);
  EXPECT_EQ(NegotiateResponseCoding("gzip; Q=0.001 , deflate;q=0.0009"), ContentCoding::kGzip);
}

TEST(ContentCodingTest, GzipAndDeflateRoundTripAcrossPieces) {
  const std::string text = Sample();
  const std::string_view view = text;
  const std::span<const std::byte> pieces[] = {Bytes(view.substr(0, 100)),
                                               Bytes(view.substr(100, 0)), Bytes(view.substr(100))};
  for (ContentCoding coding : {ContentCoding::kGzip, ContentCoding::kDeflate}) {
    const std::string compressed = DeflateBody(coding, pieces);
    EXPECT_LT(compressed.size(), text.size() / 3) << ContentCodingName(coding);
    EXPECT_EQ(Inflate(coding, compressed).value_or("failed"), text) << ContentCodingName(coding);
  }
  EXPECT_EQ(DeflateBody(ContentCoding::kIdentity, pieces), text);
}

TEST(ContentCodingTest, EmptyBodiesRoundTrip) {
  for (ContentCoding coding : {ContentCoding::kGzip, ContentCoding::kDeflate}) {
    EXPECT_EQ(Inflate(coding, Compress(coding, "")).value_or("failed"), "");
  }
}

TEST(InflateBodyTest, AcceptsRawDeflateAsSomeClientsSendIt) {
  const std::string text = Sample();
  EXPECT_EQ(Inflate(ContentCoding::kDeflate, RawDeflate(text)).value_or("failed"), text);
}

TEST(InflateBodyTest, InflatesEveryMemberOfAMultiMemberGzipBody) {
  const std::string compressed =
      Compress(ContentCoding::kGzip, "first half, ") + Compress(ContentCoding::kGzip, "second");
  EXPECT_EQ(Inflate(ContentCoding::kGzip, compressed).value_or("failed"), "first half, second");
}

TEST(InflateBodyTest, PlacesTheGivenByteOnTheBufferAlignment) {
  const std::string text = Sample();
  const std::string compressed = Compress(ContentCoding::kGzip, text);
  for (size_t offset : {size_t{0}, size_t{5}, size_t{77}}) {
    absl::StatusOr<std::shared_ptr<protocol::http::BodyBuffer>> body =
        InflateBody(ContentCoding::kGzip, Bytes(compressed), text.size(), offset);
    ASSERT_TRUE(body.ok()) << body.status();
    EXPECT_EQ(reinterpret_cast<uintptr_t>((*body)->data() + offset) %
                  protocol::http::BodyBuffer::kAlignment,
              0u);
    EXPECT_EQ((*body)->view(), text);
  }
}

TEST(InflateBodyTest, AnInflatedBodyIsChargedToTheBudgetAndRefusedPastIt) {
  // A body that inflates to ~1 MB from a few KB: the budget, not the size limit, stops it.
  const std::string text(size_t{1} << 20, 'z');
  const std::string compressed = Compress(ContentCoding::kGzip, text);
  MemoryBudget small(256 * 1024);
  absl::StatusOr<std::shared_ptr<protocol::http::BodyBuffer>> refused =
      InflateBody(ContentCoding::kGzip, Bytes(compressed), size_t{64} << 20, 0, &small);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(refused.status().message(), HasSubstr("limit of request memory (262144 bytes"));
  EXPECT_EQ(small.in_use(), 0u);

  MemoryBudget ample(size_t{4} << 20);
  absl::StatusOr<std::shared_ptr<protocol::http::BodyBuffer>> body =
      InflateBody(ContentCoding::kGzip, Bytes(compressed), size_t{64} << 20, 0, &ample);
  ASSERT_TRUE(body.ok()) << body.status();
  EXPECT_EQ((*body)->view(), text);
  EXPECT_EQ(ample.in_use(), (*body)->capacity());
  body->reset();
  EXPECT_EQ(ample.in_use(), 0u);
}

TEST(InflateBodyTest, CorruptTruncatedOrTrailingDataIsInvalidArgument) {
  const std::string text = Sample();
  for (ContentCoding coding : {ContentCoding::kGzip, ContentCoding::kDeflate}) {
    std::string compressed = Compress(coding, text);
    std::string corrupt = compressed;
    for (size_t i = 10; i < 30; ++i) corrupt[i] = static_cast<char>(corrupt[i] ^ 0x5a);
    const absl::StatusOr<std::string> bad = Inflate(coding, corrupt);
    EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument) << bad.status();
    EXPECT_THAT(bad.status().message(), HasSubstr(ContentCodingName(coding)));

    const absl::StatusOr<std::string> truncated =
        Inflate(coding, std::string_view(compressed).substr(0, compressed.size() - 9));
    EXPECT_EQ(truncated.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(truncated.status().message(), HasSubstr("ends before"));

    const absl::StatusOr<std::string> trailing = Inflate(coding, compressed + "junk");
    EXPECT_EQ(trailing.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(trailing.status().message(), HasSubstr("4 byte(s) after"));
  }
  EXPECT_EQ(Inflate(ContentCoding::kGzip, "not gzip at all").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(InflateBodyTest, StopsInflatingABodyOnceItPassesTheLimit) {
  const std::string zeros(size_t{16} << 20, '\0');
  const std::string bomb = Compress(ContentCoding::kGzip, zeros);
  ASSERT_LT(bomb.size(), size_t{100} << 10);
  const absl::StatusOr<std::string> refused = Inflate(ContentCoding::kGzip, bomb, size_t{1} << 20);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(refused.status().message(), HasSubstr("more than 1048576 bytes"));
  // Exactly at the limit is allowed.
  const absl::StatusOr<std::string> exact = Inflate(ContentCoding::kGzip, bomb, zeros.size());
  ASSERT_TRUE(exact.ok()) << exact.status();
  EXPECT_EQ(exact->size(), zeros.size());
}

TEST(InflateBodyTest, IdentityIsNotACodingToInflate) {
  EXPECT_EQ(Inflate(ContentCoding::kIdentity, "x").status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace brigade::frontend
