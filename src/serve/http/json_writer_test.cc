#include "serve/http/json_writer.h"

#include <cmath>
#include <limits>
#include <string>

#include "gtest/gtest.h"

namespace brigade::serve {
namespace {

TEST(JsonWriterTest, PlacesCommasBetweenMembersAndElements) {
  std::string out;
  JsonWriter writer(&out);
  writer.BeginObject();
  writer.Key("a");
  writer.Int(1);
  writer.Key("b");
  writer.BeginArray();
  writer.Int(-2);
  writer.BeginObject();
  writer.EndObject();
  writer.BeginArray();
  writer.EndArray();
  writer.Null();
  writer.EndArray();
  writer.Key("c");
  writer.Bool(true);
  writer.EndObject();
  EXPECT_EQ(out, R"({"a":1,"b":[-2,{},[],null],"c":true})");
}

TEST(JsonWriterTest, EscapesQuotesBackslashesAndControlCharacters) {
  std::string out;
  JsonWriter writer(&out);
  writer.String(std::string("q\"b\\n\nt\tz\x01\x1f\x00", 12));
  EXPECT_EQ(out, R"("q\"b\\n\nt\tz\u0001\u001f\u0000")");
}

TEST(JsonWriterTest, PassesUtf8Through) {
  std::string out;
  JsonWriter writer(&out);
  writer.String("h\xC3\xA9llo");
  EXPECT_EQ(out, "\"h\xC3\xA9llo\"");
}

TEST(JsonWriterTest, WritesShortestRoundTripNumbers) {
  std::string out;
  JsonWriter writer(&out);
  writer.BeginArray();
  writer.Float(0.1f);
  writer.Double(0.1);
  writer.Float(1.0f);
  writer.Double(1e300);
  writer.Int(std::numeric_limits<int64_t>::min());
  writer.Uint(std::numeric_limits<uint64_t>::max());
  writer.EndArray();
  EXPECT_EQ(out, "[0.1,0.1,1,1e+300,-9223372036854775808,18446744073709551615]");
}

TEST(JsonWriterTest, WritesNonFiniteNumbersAsTritonDoes) {
  std::string out;
  JsonWriter writer(&out);
  writer.BeginArray();
  writer.Float(std::nanf(""));
  writer.Double(std::numeric_limits<double>::infinity());
  writer.Double(-std::numeric_limits<double>::infinity());
  writer.EndArray();
  EXPECT_EQ(out, "[NaN,Infinity,-Infinity]");
}

TEST(JsonWriterTest, AppendsRawJsonAsOneValue) {
  std::string out;
  JsonWriter writer(&out);
  writer.BeginArray();
  writer.Int(1);
  writer.Raw(R"({"x":2})");
  writer.EndArray();
  EXPECT_EQ(out, R"([1,{"x":2}])");
}

TEST(Utf8Test, AcceptsWellFormedText) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("ascii"));
  EXPECT_TRUE(IsValidUtf8("\xC3\xA9"));          // é
  EXPECT_TRUE(IsValidUtf8("\xE2\x82\xAC"));      // €
  EXPECT_TRUE(IsValidUtf8("\xF0\x9F\x98\x80"));  // 😀
}

TEST(Utf8Test, RejectsMalformedText) {
  EXPECT_FALSE(IsValidUtf8("\xFF"));
  EXPECT_FALSE(IsValidUtf8("\xC3"));              // truncated
  EXPECT_FALSE(IsValidUtf8("\xC0\xAF"));          // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80"));      // surrogate
  EXPECT_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));  // > U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\xE2\x28\xA1"));      // bad continuation
}

}  // namespace
}  // namespace brigade::serve
