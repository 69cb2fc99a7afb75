#include "telemetry/trace_context.h"

#include <set>
#include <string>

#include "core/strings.h"
#include "gtest/gtest.h"

namespace brigade::telemetry {
namespace {

constexpr std::string_view kValid = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

TEST(TraceparentTest, ParsesTheSpecExample) {
  const absl::StatusOr<TraceContext> context = ParseTraceparent(kValid);
  ASSERT_TRUE(context.ok()) << context.status();
  EXPECT_EQ(context->trace_id.Hex(), "0af7651916cd43dd8448eb211c80319c");
  EXPECT_EQ(context->parent_span_id.Hex(), "b7ad6b7169203331");
  EXPECT_EQ(context->flags, 0x01);
  EXPECT_TRUE(context->sampled());
}

TEST(TraceparentTest, SampledIsBitZeroOnly) {
  EXPECT_FALSE(
      ParseTraceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00")->sampled());
  EXPECT_TRUE(
      ParseTraceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-09")->sampled());
  EXPECT_FALSE(
      ParseTraceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-02")->sampled());
}

TEST(TraceparentTest, IgnoresSurroundingOptionalWhitespace) {
  EXPECT_TRUE(ParseTraceparent(StrCat(" \t", kValid, " ")).ok());
}

TEST(TraceparentTest, RejectsEveryMalformedVariant) {
  const char* invalid[] = {
      "",
      "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331",          // no flags
      "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",       // uppercase trace-id
      "00-0af7651916cd43dd8448eb211c80319c-B7AD6B7169203331-01",       // uppercase parent-id
      "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-0A",       // uppercase flags
      "00-00000000000000000000000000000000-b7ad6b7169203331-01",       // zero trace-id
      "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",       // zero parent-id
      "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",       // forbidden version
      "0g-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",       // non-hex version
      "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-",      // 00 with extra text
      "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01x",      // 00 with extra text
      "00_0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",       // wrong delimiter
      "00-0af7651916cd43dd8448eb211c80319c_b7ad6b7169203331-01",       // wrong delimiter
      "00-0af7651916cd43dd8448eb211c8031-b7ad6b7169203331-01-abcd",    // short trace-id
      "00-0af7651916cd43dd8448eb211c80319c-b7ad6b71692033-01-abcdef",  // short parent-id
      "00-0af7651916cd43dd8448eb211c80319z-b7ad6b7169203331-01",       // non-hex trace-id
      "cc-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01x",      // future version, no dash
      "cc-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-1",        // short flags
  };
  for (const char* header : invalid) {
    EXPECT_FALSE(ParseTraceparent(header).ok()) << header;
  }
}

TEST(TraceparentTest, HigherVersionsParseTheirFirstFourFields) {
  const absl::StatusOr<TraceContext> exact =
      ParseTraceparent("cc-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
  ASSERT_TRUE(exact.ok());
  const absl::StatusOr<TraceContext> extended =
      ParseTraceparent("cc-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-what-ever");
  ASSERT_TRUE(extended.ok());
  EXPECT_EQ(extended->trace_id.Hex(), "0af7651916cd43dd8448eb211c80319c");
  EXPECT_TRUE(extended->sampled());
}

TEST(TracestateTest, KeepsValidMembersDropsEmptyOnesAndOws) {
  EXPECT_EQ(*ParseTracestate("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"),
            "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE");
  EXPECT_EQ(*ParseTracestate(" rojo=1 ,\t, congo=2,"), "rojo=1,congo=2");
  EXPECT_EQ(*ParseTracestate(""), "");
  EXPECT_EQ(*ParseTracestate("  ,  "), "");
  EXPECT_EQ(*ParseTracestate("tenant1@vendor=x"), "tenant1@vendor=x");
  EXPECT_EQ(*ParseTracestate("a= leading space kept"), "a= leading space kept");
}

TEST(TracestateTest, RejectsBadKeysValuesDuplicatesAndTooManyMembers) {
  const char* invalid[] = {
      "Rojo=1",               // uppercase key
      "1abc=1",               // simple key must start with a letter
      "a=",                   // empty value
      "=1",                   // empty key
      "a=b=c",                // '=' in value
      "novalue",              // no '='
      "a=1,a=2",              // duplicate key
      "t@Vendor=1",           // uppercase system id
      "t@vendorvendor123=1",  // system id over 14 characters
      "a=\x7f",               // non-printable value
  };
  for (const char* header : invalid) {
    EXPECT_FALSE(ParseTracestate(header).ok()) << header;
  }
  std::string members;
  for (int i = 0; i < 33; ++i) members += StrCat("k", i, "=v,");
  EXPECT_FALSE(ParseTracestate(members).ok());
  members.clear();
  for (int i = 0; i < 32; ++i) members += StrCat("k", i, "=v,");
  EXPECT_TRUE(ParseTracestate(members).ok());
  EXPECT_FALSE(ParseTracestate(StrCat("a=", std::string(257, 'x'))).ok());
  EXPECT_TRUE(ParseTracestate(StrCat("a=", std::string(256, 'x'))).ok());
}

TEST(ExtractTraceContextTest, InvalidTraceparentStartsANewTraceAndDropsTracestate) {
  EXPECT_FALSE(ExtractTraceContext(std::nullopt, "a=1").has_value());
  EXPECT_FALSE(ExtractTraceContext("garbage", "a=1").has_value());
  const auto context = ExtractTraceContext(kValid, "a=1");
  ASSERT_TRUE(context.has_value());
  EXPECT_EQ(context->trace_state, "a=1");
}

TEST(ExtractTraceContextTest, InvalidTracestateDoesNotAffectTraceparent) {
  const auto context = ExtractTraceContext(kValid, "A=1");
  ASSERT_TRUE(context.has_value());
  EXPECT_EQ(context->trace_state, "");
  EXPECT_TRUE(context->sampled());
}

TEST(FormatTraceparentTest, RoundTripsAndClearsUnknownFlags) {
  const TraceId trace = NewTraceId();
  const SpanId span = NewSpanId();
  const std::string header = FormatTraceparent(trace, span, 0xFF);
  EXPECT_EQ(header.size(), 55u);
  const absl::StatusOr<TraceContext> parsed = ParseTraceparent(header);
  ASSERT_TRUE(parsed.ok()) << header;
  EXPECT_EQ(parsed->trace_id, trace);
  EXPECT_EQ(parsed->parent_span_id, span);
  EXPECT_EQ(parsed->flags, kTraceFlagSampled | kTraceFlagRandom);
}

TEST(IdGenerationTest, IdsAreValidAndDistinct) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    const TraceId trace = NewTraceId();
    const SpanId span = NewSpanId();
    ASSERT_TRUE(trace.valid());
    ASSERT_TRUE(span.valid());
    seen.insert(trace.Hex());
  }
  EXPECT_EQ(seen.size(), 1000u);
}

}  // namespace
}  // namespace brigade::telemetry
