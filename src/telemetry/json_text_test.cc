#include "telemetry/json_text.h"

#include <cmath>
#include <limits>

#include "core/strings.h"
#include "gtest/gtest.h"

namespace brigade::telemetry {
namespace {

// Escapes and number spellings are core/json_text.h's (tested there); these check what observe
// adds: replacement of invalid UTF-8 and null for non-finite numbers.

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

std::string Json(std::string_view text) {
  std::string out;
  AppendJsonString(text, &out);
  return out;
}

// `parts` concatenated between quotes.
template <typename... Parts>
std::string Quoted(const Parts&... parts) {
  return StrCat("\"", parts..., "\"");
}

std::string Replacements(int count) {
  std::string out;
  for (int i = 0; i < count; ++i) out.append(kReplacement);
  return out;
}

TEST(JsonTextTest, EscapesQuotesBackslashesAndControls) {
  EXPECT_EQ(Json("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(Json("\n\r\t"), "\"\\n\\r\\t\"");
  EXPECT_EQ(Json(std::string_view("\x01\x1f", 2)), "\"\\u0001\\u001f\"");
}

TEST(JsonTextTest, KeepsValidUtf8AndReplacesInvalidBytes) {
  EXPECT_EQ(Json("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"),
            "\"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\"");
  EXPECT_EQ(Json("\xFF"), Quoted(Replacements(1)));
  EXPECT_EQ(Json("\xC3"), Quoted(Replacements(1)));              // truncated sequence
  EXPECT_EQ(Json("\xC0\xAF"), Quoted(Replacements(2)));          // overlong
  EXPECT_EQ(Json("\xED\xA0\x80"), Quoted(Replacements(3)));      // surrogate
  EXPECT_EQ(Json("\xF4\x90\x80\x80"), Quoted(Replacements(4)));  // > U+10FFFF
}

TEST(JsonTextTest, ReplacesOnlyTheInvalidBytesAndEscapesTheRest) {
  // A sequence cut short by valid text: each of its bytes is replaced, the text after it kept.
  EXPECT_EQ(Json("a\xE2\x82z"), Quoted("a", Replacements(2), "z"));
  EXPECT_EQ(Json("\xC3\xA9\xFF\xC3\xA9"), Quoted("\xC3\xA9", Replacements(1), "\xC3\xA9"));
  EXPECT_EQ(Json("ok\xF0\x9F\x98"), Quoted("ok", Replacements(3)));
  EXPECT_EQ(Json("\"\xFF\n"), Quoted("\\\"", Replacements(1), "\\n"));
}

TEST(JsonTextTest, NumbersAreShortestAndNonFiniteIsNull) {
  std::string out;
  AppendJsonNumber(12.5, &out);
  out.push_back(' ');
  AppendJsonNumber(0.1, &out);
  out.push_back(' ');
  AppendJsonNumber(std::numeric_limits<double>::infinity(), &out);
  out.push_back(' ');
  AppendJsonNumber(-std::numeric_limits<double>::infinity(), &out);
  out.push_back(' ');
  AppendJsonNumber(std::nan(""), &out);
  EXPECT_EQ(out, "12.5 0.1 null null null");
}

}  // namespace
}  // namespace brigade::telemetry
