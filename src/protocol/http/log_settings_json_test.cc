#include "protocol/http/log_settings_json.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::protocol::http {
namespace {

using ::testing::HasSubstr;

absl::StatusOr<protocol::LogSettingsUpdate> DecodeLogSettings(std::string_view body) {
  return DecodeLogSettingsRequest(*BodyBuffer::FromString(body));
}

TEST(LogSettingsJsonTest, DecodesEveryTritonSetting) {
  absl::StatusOr<protocol::LogSettingsUpdate> update =
      DecodeLogSettings(R"({"log_file":"","log_info":false,"log_warning":true,"log_error":true,)"
                        R"("log_verbose_level":3,"log_format":"ISO8601"})");
  ASSERT_TRUE(update.ok()) << update.status();
  EXPECT_EQ(update->log_file, "");
  EXPECT_EQ(update->log_info, false);
  EXPECT_EQ(update->log_warning, true);
  EXPECT_EQ(update->log_error, true);
  EXPECT_EQ(update->log_verbose_level, 3u);
  EXPECT_EQ(update->log_format, "ISO8601");
}

TEST(LogSettingsJsonTest, ABlankBodyOrAnEmptyObjectChangesNothing) {
  for (std::string_view body : {"", " \n", "{}"}) {
    absl::StatusOr<protocol::LogSettingsUpdate> update = DecodeLogSettings(body);
    ASSERT_TRUE(update.ok()) << update.status();
    EXPECT_FALSE(update->log_info.has_value());
    EXPECT_FALSE(update->log_verbose_level.has_value());
    EXPECT_FALSE(update->log_file.has_value());
  }
}

TEST(LogSettingsJsonTest, RefusesWrongTypesUnknownFieldsAndBadLevels) {
  const struct {
    std::string_view body;
    std::string_view fragment;
  } cases[] = {
      {R"({"log_info":"yes"})", "'log_info'"},
      {R"({"log_file":1})", "'log_file'"},
      {R"({"log_verbose_level":-1})", "'log_verbose_level'"},
      {R"({"log_verbose_level":4294967296})", "'log_verbose_level'"},
      {R"({"log_verbose_level":1.5})", "'log_verbose_level'"},
      {R"({"log_level":"debug"})", "unknown field 'log_level'"},
      {R"({"log_info":true)", "log settings request"},
  };
  for (const auto& c : cases) {
    absl::StatusOr<protocol::LogSettingsUpdate> update = DecodeLogSettings(c.body);
    ASSERT_FALSE(update.ok()) << c.body;
    EXPECT_EQ(update.status().code(), absl::StatusCode::kInvalidArgument) << c.body;
    EXPECT_THAT(std::string(update.status().message()), HasSubstr(std::string(c.fragment)))
        << c.body;
  }
}

TEST(LogSettingsJsonTest, EncodesTheSettingsTritonsWay) {
  protocol::LogSettings settings;
  settings.log_info = false;
  settings.log_verbose_level = 2;
  EXPECT_EQ(EncodeLogSettings(settings),
            R"({"log_file":"","log_info":false,"log_warning":true,"log_error":true,)"
            R"("log_verbose_level":2,"log_format":"default"})");
}

}  // namespace
}  // namespace brigade::protocol::http
