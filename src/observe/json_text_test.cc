#include "observe/json_text.h"

#include <limits>

#include "gtest/gtest.h"

namespace brigade::observe {
namespace {

std::string Json(std::string_view text) {
  std::string out;
  AppendJsonString(text, &out);
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
  EXPECT_EQ(Json("\xFF"), "\"\xEF\xBF\xBD\"");
  EXPECT_EQ(Json("\xC3"), "\"\xEF\xBF\xBD\"");                  // truncated sequence
  EXPECT_EQ(Json("\xC0\xAF"), "\"\xEF\xBF\xBD\xEF\xBF\xBD\"");  // overlong
  EXPECT_EQ(Json("\xED\xA0\x80"), "\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"");  // surrogate
}

TEST(JsonTextTest, NumbersAreShortestAndNonFiniteIsNull) {
  std::string out;
  AppendJsonNumber(12.5, &out);
  out.push_back(' ');
  AppendJsonNumber(std::numeric_limits<double>::infinity(), &out);
  EXPECT_EQ(out, "12.5 null");
}

}  // namespace
}  // namespace brigade::observe
