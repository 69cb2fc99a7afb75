#include "protocol/http/json_writer.h"

#include <cmath>
#include <limits>
#include <string>

#include "gtest/gtest.h"

namespace brigade::protocol::http {
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

// Strings and numbers are spelled by core/json_text.h (tested there); these check that the writer
// uses it for keys, string values and each kind of number.
TEST(JsonWriterTest, EscapesKeysAndStringValues) {
  std::string out;
  JsonWriter writer(&out);
  writer.BeginObject();
  writer.Key("k\"\n");
  writer.String(std::string("q\"b\\n\nt\tz\x01\x1f\x00", 12));
  writer.Key("utf8");
  writer.String("h\xC3\xA9llo");
  writer.EndObject();
  EXPECT_EQ(out, R"({"k\"\n":"q\"b\\n\nt\tz\u0001\u001f\u0000","utf8":"h)"
                 "\xC3\xA9"
                 R"(llo"})");
}

TEST(JsonWriterTest, WritesShortestRoundTripAndTritonNonFiniteNumbers) {
  std::string out;
  JsonWriter writer(&out);
  writer.BeginArray();
  writer.Float(0.1f);
  writer.Double(0.1);
  writer.Float(1.0f);
  writer.Double(1e300);
  writer.Int(std::numeric_limits<int64_t>::min());
  writer.Uint(std::numeric_limits<uint64_t>::max());
  writer.Float(std::nanf(""));
  writer.Double(std::numeric_limits<double>::infinity());
  writer.Double(-std::numeric_limits<double>::infinity());
  writer.EndArray();
  EXPECT_EQ(out,
            "[0.1,0.1,1,1e+300,-9223372036854775808,18446744073709551615,NaN,Infinity,-Infinity]");
}

TEST(JsonWriterTest, NonFiniteNumbersAsStringsKeepTheOutputStrictJson) {
  std::string out;
  JsonWriter writer(&out);
  writer.set_non_finite_as_strings(true);
  writer.BeginArray();
  writer.Float(0.5f);
  writer.Float(std::nanf(""));
  writer.Float(-std::numeric_limits<float>::infinity());
  writer.Double(std::numeric_limits<double>::infinity());
  writer.Double(2.0);
  writer.EndArray();
  EXPECT_EQ(out, R"([0.5,"NaN","-Infinity","Infinity",2])");
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

}  // namespace
}  // namespace brigade::protocol::http
