#include "protocol/http/trace_settings_json.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::protocol::http {
namespace {

using ::testing::HasSubstr;

absl::StatusOr<protocol::TraceSettingsUpdate> DecodeTraceSettings(std::string_view body) {
  return DecodeTraceSettingsRequest(*BodyBuffer::FromString(body));
}

TEST(TraceSettingsJsonTest, StringsArraysAndNullsAsTritonclientSendsThem) {
  auto update = DecodeTraceSettings(
      R"({"trace_rate":"100","trace_level":["TIMESTAMPS"],"trace_count":null})");
  ASSERT_TRUE(update.ok()) << update.status();
  ASSERT_EQ(update->size(), 3u);
  EXPECT_EQ((*update)[0], (protocol::TraceSettingChange{"trace_rate", {{"100"}}}));
  EXPECT_EQ((*update)[1], (protocol::TraceSettingChange{"trace_level", {{"TIMESTAMPS"}}}));
  EXPECT_EQ((*update)[2], (protocol::TraceSettingChange{"trace_count", std::nullopt}));
  EXPECT_TRUE(DecodeTraceSettings("  \n")->empty());
}

TEST(TraceSettingsJsonTest, OtherValueTypesAreRefusedNamingTheSetting) {
  for (std::string_view body :
       {R"({"trace_rate":100})", R"({"trace_level":[1]})", R"({"trace_level":{"a":"b"}})"}) {
    auto update = DecodeTraceSettings(body);
    EXPECT_EQ(update.status().code(), absl::StatusCode::kInvalidArgument) << body;
    EXPECT_THAT(std::string(update.status().message()),
                HasSubstr("must be a string, an array of strings or null"));
  }
  EXPECT_EQ(DecodeTraceSettings("[").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(TraceSettingsJsonTest, TraceLevelIsAnArrayAndTheRestStrings) {
  const protocol::TraceSettings settings = {
      {"trace_level", {"OFF"}}, {"trace_rate", {"1000"}}, {"trace_file", {""}}};
  EXPECT_EQ(EncodeTraceSettings(settings),
            R"({"trace_level":["OFF"],"trace_rate":"1000","trace_file":""})");
}

}  // namespace
}  // namespace brigade::protocol::http
