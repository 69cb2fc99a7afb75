#include "core/json_text.h"

#include <cmath>
#include <limits>
#include <string>

#include "gtest/gtest.h"

namespace brigade {
namespace {

std::string Json(std::string_view text) {
  std::string out;
  AppendJsonString(text, &out);
  return out;
}

template <typename Append, typename Value>
std::string Number(Append append, Value value) {
  std::string out;
  append(value, &out);
  return out;
}

TEST(JsonStringTest, QuotesPlainTextUnchanged) {
  EXPECT_EQ(Json(""), R"("")");
  EXPECT_EQ(Json("plain text / with ~ and \x7F"), "\"plain text / with ~ and \x7F\"");
}

TEST(JsonStringTest, EscapesQuotesAndBackslashes) {
  EXPECT_EQ(Json(R"(a"b\c)"), R"("a\"b\\c")");
  EXPECT_EQ(Json(R"("\)"), R"("\"\\")");
}

TEST(JsonStringTest, UsesShortEscapesForCommonControls) {
  EXPECT_EQ(Json("\n\r\t\b\f"), R"("\n\r\t\b\f")");
}

TEST(JsonStringTest, WritesOtherControlsAsUnicodeEscapes) {
  EXPECT_EQ(Json(std::string_view("\x00\x01\x0b\x1b\x1f", 5)),
            R"("\u0000\u0001\u000b\u001b\u001f")");
}

TEST(JsonStringTest, EscapesInsideAndBetweenRunsOfPlainText) {
  EXPECT_EQ(Json(std::string("q\"b\\n\nt\tz\x01\x1f\x00", 12)),
            R"("q\"b\\n\nt\tz\u0001\u001f\u0000")");
  EXPECT_EQ(Json("ab\ncd\"ef"), R"("ab\ncd\"ef")");
}

TEST(JsonStringTest, CopiesUtf8BytesVerbatim) {
  EXPECT_EQ(Json("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"),
            "\"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\"");
}

TEST(JsonStringTest, AppendsToWhatTheStringHolds) {
  std::string out = "[";
  AppendJsonString("a", &out);
  out.push_back(',');
  AppendJsonString("b", &out);
  EXPECT_EQ(out, R"(["a","b")");
}

TEST(JsonNumberTest, IntegersCoverTheirWholeRange) {
  EXPECT_EQ(Number(AppendJsonInt, int64_t{0}), "0");
  EXPECT_EQ(Number(AppendJsonInt, int64_t{-42}), "-42");
  EXPECT_EQ(Number(AppendJsonInt, std::numeric_limits<int64_t>::min()), "-9223372036854775808");
  EXPECT_EQ(Number(AppendJsonInt, std::numeric_limits<int64_t>::max()), "9223372036854775807");
  EXPECT_EQ(Number(AppendJsonUint, std::numeric_limits<uint64_t>::max()), "18446744073709551615");
}

TEST(JsonNumberTest, FloatingPointIsShortestRoundTrip) {
  EXPECT_EQ(Number(AppendJsonDouble, 0.1), "0.1");
  EXPECT_EQ(Number(AppendJsonDouble, 12.5), "12.5");
  EXPECT_EQ(Number(AppendJsonDouble, 1.0), "1");
  EXPECT_EQ(Number(AppendJsonDouble, -0.0), "-0");
  EXPECT_EQ(Number(AppendJsonDouble, 1e300), "1e+300");
  EXPECT_EQ(Number(AppendJsonDouble, 100000.0), "1e+05");  // shorter than 100000
  EXPECT_EQ(Number(AppendJsonDouble, 123456.0), "123456");
  EXPECT_EQ(Number(AppendJsonDouble, 1.0 / 3), "0.3333333333333333");
  EXPECT_EQ(Number(AppendJsonDouble, std::numeric_limits<double>::denorm_min()), "5e-324");
  const std::string max = Number(AppendJsonDouble, std::numeric_limits<double>::max());
  EXPECT_EQ(max, "1.7976931348623157e+308");
}

TEST(JsonNumberTest, Fp32UsesFloatsShortestForm) {
  EXPECT_EQ(Number(AppendJsonFloat, 0.1f), "0.1");
  EXPECT_EQ(Number(AppendJsonFloat, 1.0f), "1");
  EXPECT_EQ(Number(AppendJsonFloat, 1.0f / 3), "0.33333334");
  EXPECT_EQ(Number(AppendJsonFloat, std::numeric_limits<float>::max()), "3.4028235e+38");
  EXPECT_EQ(Number(AppendJsonDouble, static_cast<double>(0.1f)), "0.10000000149011612");
}

TEST(JsonNumberTest, NonFiniteUsesTritonSpellings) {
  for (const double value : {std::nan(""), -std::nan("")}) {
    EXPECT_EQ(Number(AppendJsonDouble, value), "NaN");
  }
  EXPECT_EQ(Number(AppendJsonDouble, std::numeric_limits<double>::infinity()), "Infinity");
  EXPECT_EQ(Number(AppendJsonDouble, -std::numeric_limits<double>::infinity()), "-Infinity");
  EXPECT_EQ(Number(AppendJsonFloat, std::nanf("")), "NaN");
  EXPECT_EQ(Number(AppendJsonFloat, std::numeric_limits<float>::infinity()), "Infinity");
  EXPECT_EQ(Number(AppendJsonFloat, -std::numeric_limits<float>::infinity()), "-Infinity");
}

TEST(Utf8Test, AcceptsWellFormedTextUpToEachLengthsBounds) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("ascii"));
  EXPECT_TRUE(IsValidUtf8(std::string_view("\x00\x7F", 2)));
  EXPECT_TRUE(IsValidUtf8("\xC2\x80"));          // U+0080, smallest 2-byte
  EXPECT_TRUE(IsValidUtf8("\xC3\xA9"));          // é
  EXPECT_TRUE(IsValidUtf8("\xDF\xBF"));          // U+07FF
  EXPECT_TRUE(IsValidUtf8("\xE0\xA0\x80"));      // U+0800, smallest 3-byte
  EXPECT_TRUE(IsValidUtf8("\xE2\x82\xAC"));      // €
  EXPECT_TRUE(IsValidUtf8("\xED\x9F\xBF"));      // U+D7FF, just below the surrogates
  EXPECT_TRUE(IsValidUtf8("\xEE\x80\x80"));      // U+E000, just above them
  EXPECT_TRUE(IsValidUtf8("\xEF\xBF\xBF"));      // U+FFFF
  EXPECT_TRUE(IsValidUtf8("\xF0\x90\x80\x80"));  // U+10000, smallest 4-byte
  EXPECT_TRUE(IsValidUtf8("\xF0\x9F\x98\x80"));  // 😀
  EXPECT_TRUE(IsValidUtf8("\xF4\x8F\xBF\xBF"));  // U+10FFFF, the last code point
}

TEST(Utf8Test, RejectsBytesThatNeverStartASequence) {
  EXPECT_FALSE(IsValidUtf8("\x80"));  // stray continuation byte
  EXPECT_FALSE(IsValidUtf8("\xBF"));
  EXPECT_FALSE(IsValidUtf8("\xF5\x80\x80\x80"));  // would be > U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\xFE"));
  EXPECT_FALSE(IsValidUtf8("\xFF"));
}

TEST(Utf8Test, RejectsOverlongForms) {
  EXPECT_FALSE(IsValidUtf8("\xC0\xAF"));          // '/' in 2 bytes
  EXPECT_FALSE(IsValidUtf8("\xC1\xBF"));          // U+007F in 2 bytes
  EXPECT_FALSE(IsValidUtf8("\xE0\x80\xAF"));      // '/' in 3 bytes
  EXPECT_FALSE(IsValidUtf8("\xE0\x9F\xBF"));      // U+07FF in 3 bytes
  EXPECT_FALSE(IsValidUtf8("\xF0\x80\x80\xAF"));  // '/' in 4 bytes
  EXPECT_FALSE(IsValidUtf8("\xF0\x8F\xBF\xBF"));  // U+FFFF in 4 bytes
}

TEST(Utf8Test, RejectsSurrogatesAndCodePointsAboveTheLast) {
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80"));              // U+D800
  EXPECT_FALSE(IsValidUtf8("\xED\xBF\xBF"));              // U+DFFF
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\xBD\xED\xB8\x80"));  // a CESU-8 surrogate pair
  EXPECT_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));          // U+110000
}

TEST(Utf8Test, RejectsTruncatedSequencesAndBadContinuations) {
  EXPECT_FALSE(IsValidUtf8("\xC3"));
  EXPECT_FALSE(IsValidUtf8("\xE2\x82"));
  EXPECT_FALSE(IsValidUtf8("\xF0\x9F\x98"));
  EXPECT_FALSE(IsValidUtf8("ok\xF0\x9F"));
  EXPECT_FALSE(IsValidUtf8("\xE2\x28\xA1"));      // second byte is ASCII
  EXPECT_FALSE(IsValidUtf8("\xE2\x82\x28"));      // third byte is ASCII
  EXPECT_FALSE(IsValidUtf8("\xF0\x9F\x98\xC3"));  // fourth byte starts a new sequence
}

TEST(Utf8Test, PrefixLengthStopsAtTheFirstMalformedSequence) {
  EXPECT_EQ(ValidUtf8PrefixLength(""), 0u);
  EXPECT_EQ(ValidUtf8PrefixLength("caf\xC3\xA9"), 5u);
  EXPECT_EQ(ValidUtf8PrefixLength("ab\xFF"
                                  "cd"),
            2u);
  EXPECT_EQ(ValidUtf8PrefixLength("\xC3\xA9\xE2\x82"), 2u);  // truncated at the end
  EXPECT_EQ(ValidUtf8PrefixLength("a\xED\xA0\x80z"), 1u);    // surrogate
  EXPECT_EQ(ValidUtf8PrefixLength("\x80"), 0u);
}

}  // namespace
}  // namespace brigade
