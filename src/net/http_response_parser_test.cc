#include "net/http_response_parser.h"

#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace brigade::net {
namespace {

TEST(ParseHttpResponseHeadTest, IncompleteHeadAsksForMoreBytes) {
  HttpResponseHead head;
  absl::StatusOr<bool> parsed = ParseHttpResponseHead("HTTP/1.1 200 OK\r\nContent-Le", &head);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_FALSE(*parsed);
}

TEST(ParseHttpResponseHeadTest, ReadsStatusLengthsAndKeepAlive) {
  const std::string bytes =
      "HTTP/1.1 200 OK\r\ncontent-length: 12\r\nInference-Header-Content-Length:  5 \r\n"
      "X-Other: y\r\n\r\nbody";
  HttpResponseHead head;
  absl::StatusOr<bool> parsed = ParseHttpResponseHead(bytes, &head);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_TRUE(*parsed);
  EXPECT_EQ(head.status, 200);
  EXPECT_EQ(head.head_bytes, bytes.size() - 4);
  EXPECT_EQ(head.content_length, 12u);
  EXPECT_EQ(head.inference_header_length, 5u);
  EXPECT_FALSE(head.chunked);
  EXPECT_FALSE(head.close);
}

TEST(ParseHttpResponseHeadTest, ConnectionCloseAndHttp10DefaultsCloseTheConnection) {
  HttpResponseHead head;
  ASSERT_TRUE(
      *ParseHttpResponseHead("HTTP/1.1 503 Unavailable\r\nConnection: Close\r\n\r\n", &head));
  EXPECT_EQ(head.status, 503);
  EXPECT_TRUE(head.close);
  ASSERT_TRUE(*ParseHttpResponseHead("HTTP/1.0 200 OK\r\n\r\n", &head));
  EXPECT_TRUE(head.close);
  ASSERT_TRUE(*ParseHttpResponseHead("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n\r\n", &head));
  EXPECT_FALSE(head.close);
}

TEST(ParseHttpResponseHeadTest, ChunkedEncodingOverridesContentLength) {
  HttpResponseHead head;
  ASSERT_TRUE(*ParseHttpResponseHead(
      "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", &head));
  EXPECT_TRUE(head.chunked);
  EXPECT_FALSE(head.content_length.has_value());
}

TEST(ParseHttpResponseHeadTest, RefusesWhatIsNotHttp) {
  HttpResponseHead head;
  EXPECT_EQ(ParseHttpResponseHead("SSH-2.0-OpenSSH\r\n\r\n", &head).status().code(),
            absl::StatusCode::kInternal);
  EXPECT_EQ(ParseHttpResponseHead("HTTP/1.1 2x0 OK\r\n\r\n", &head).status().code(),
            absl::StatusCode::kInternal);
  EXPECT_EQ(ParseHttpResponseHead("HTTP/1.1 200 OK\r\nContent-Length: ten\r\n\r\n", &head)
                .status()
                .code(),
            absl::StatusCode::kInternal);
  EXPECT_EQ(ParseHttpResponseHead("HTTP/1.1 200 OK\r\nno colon\r\n\r\n", &head).status().code(),
            absl::StatusCode::kInternal);
}

TEST(ParseHttpResponseHeadTest, RefusesAnEndlessHead) {
  HttpResponseHead head;
  const std::string endless = "HTTP/1.1 200 OK\r\n" + std::string(200, 'x');
  EXPECT_EQ(ParseHttpResponseHead(endless, &head, 100).status().code(),
            absl::StatusCode::kInternal);
}

TEST(StatusHasNoBodyTest, InterimNoContentAndNotModifiedHaveNoBody) {
  EXPECT_TRUE(StatusHasNoBody(100));
  EXPECT_TRUE(StatusHasNoBody(204));
  EXPECT_TRUE(StatusHasNoBody(304));
  EXPECT_FALSE(StatusHasNoBody(200));
  EXPECT_FALSE(StatusHasNoBody(400));
}

TEST(DecodeChunkedInPlaceTest, JoinsChunksAndSkipsExtensionsAndTrailers) {
  std::string raw = "5;ext=1\r\nhello\r\n7\r\n, world\r\n0\r\nTrailer: x\r\n\r\n";
  absl::StatusOr<std::optional<ChunkedBody>> decoded = DecodeChunkedInPlace(raw.data(), raw.size());
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  ASSERT_TRUE(decoded->has_value());
  EXPECT_EQ((*decoded)->consumed_bytes, raw.size());
  EXPECT_EQ(raw.substr(0, (*decoded)->body_bytes), "hello, world");
}

TEST(DecodeChunkedInPlaceTest, IncompleteBodyLeavesTheBufferUntouched) {
  const std::string complete = "a\r\n0123456789\r\n0\r\n\r\n";
  for (size_t cut = 0; cut < complete.size(); ++cut) {
    std::string partial = complete.substr(0, cut);
    const std::string before = partial;
    absl::StatusOr<std::optional<ChunkedBody>> decoded =
        DecodeChunkedInPlace(partial.data(), partial.size());
    ASSERT_TRUE(decoded.ok()) << "cut " << cut << ": " << decoded.status();
    EXPECT_FALSE(decoded->has_value()) << "cut " << cut;
    EXPECT_EQ(partial, before);
  }
}

TEST(DecodeChunkedInPlaceTest, RefusesBadChunkSizes) {
  std::string raw = "zz\r\nabc\r\n0\r\n\r\n";
  EXPECT_EQ(DecodeChunkedInPlace(raw.data(), raw.size()).status().code(),
            absl::StatusCode::kInternal);
  std::string missing_crlf = "3\r\nabcX\r\n0\r\n\r\n";
  EXPECT_EQ(DecodeChunkedInPlace(missing_crlf.data(), missing_crlf.size()).status().code(),
            absl::StatusCode::kInternal);
}

TEST(ParseHttpResponseHeadTest, ReadsRetryAfterSecondsOnly) {
  HttpResponseHead head;
  ASSERT_TRUE(*ParseHttpResponseHead("HTTP/1.1 503 X\r\nRetry-After:  7 \r\n\r\n", &head));
  EXPECT_EQ(head.retry_after_seconds, 7);
  ASSERT_TRUE(*ParseHttpResponseHead(
      "HTTP/1.1 503 X\r\nRetry-After: Wed, 21 Oct 2015 07:28:00 GMT\r\n\r\n", &head));
  EXPECT_FALSE(head.retry_after_seconds.has_value());
  ASSERT_TRUE(*ParseHttpResponseHead("HTTP/1.1 503 X\r\nRetry-After: -1\r\n\r\n", &head));
  EXPECT_FALSE(head.retry_after_seconds.has_value());
}

TEST(ForEachHttpHeaderTest, VisitsEveryHeaderInOrderWithTrimmedValues) {
  const std::string head = "HTTP/1.1 200 OK\r\nContent-Type:\tapplication/json \r\nX-A: 1\r\n\r\n";
  std::vector<std::pair<std::string, std::string>> seen;
  ForEachHttpHeader(head, [&seen](std::string_view name, std::string_view value) {
    seen.emplace_back(name, value);
  });
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0], std::make_pair(std::string("Content-Type"), std::string("application/json")));
  EXPECT_EQ(seen[1], std::make_pair(std::string("X-A"), std::string("1")));
}

}  // namespace
}  // namespace brigade::net
