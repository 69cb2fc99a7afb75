#include "server/log_control.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spdlog/spdlog.h"

namespace brigade {
namespace {

using ::testing::HasSubstr;

// spdlog's level is process-wide: each test starts from info and puts it back.
class LogControlTest : public ::testing::Test {
 protected:
  void SetUp() override { spdlog::set_level(spdlog::level::info); }
  void TearDown() override {
    spdlog::set_level(spdlog::level::info);
    spdlog::set_pattern("%+");
  }
};

TEST_F(LogControlTest, StartsFromSpdlogsLevel) {
  spdlog::set_level(spdlog::level::warn);
  const protocol::LogSettings settings = LogControl().Get();
  EXPECT_FALSE(settings.log_info);
  EXPECT_TRUE(settings.log_warning);
  EXPECT_TRUE(settings.log_error);
  EXPECT_EQ(settings.log_verbose_level, 0u);
  EXPECT_EQ(settings.log_file, "");
  EXPECT_EQ(settings.log_format, "default");

  spdlog::set_level(spdlog::level::debug);
  EXPECT_EQ(LogControl().Get().log_verbose_level, 1u);
}

TEST_F(LogControlTest, EachThresholdSetsSpdlogsLevel) {
  LogControl control;
  const struct {
    protocol::LogSettingsUpdate update;
    spdlog::level::level_enum level;
  } cases[] = {
      {{.log_verbose_level = 2}, spdlog::level::debug},
      {{.log_verbose_level = 0}, spdlog::level::info},
      {{.log_info = false}, spdlog::level::warn},
      {{.log_warning = false}, spdlog::level::err},
      {{.log_error = false}, spdlog::level::off},
      {{.log_info = true, .log_warning = true, .log_error = true}, spdlog::level::info},
  };
  for (const auto& c : cases) {
    absl::StatusOr<protocol::LogSettings> settings = control.Update(c.update);
    ASSERT_TRUE(settings.ok()) << settings.status();
    EXPECT_EQ(spdlog::get_level(), c.level);
    EXPECT_EQ(*settings, control.Get());
  }
}

TEST_F(LogControlTest, ASeverityWithoutTheMoreSevereOnesIsRefusedAndChangesNothing) {
  LogControl control;
  const protocol::LogSettings before = control.Get();
  absl::StatusOr<protocol::LogSettings> refused = control.Update({.log_warning = false});
  ASSERT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("log_info with log_warning off"));
  EXPECT_EQ(control.Get(), before);
  EXPECT_EQ(spdlog::get_level(), spdlog::level::info);

  ASSERT_TRUE(control.Update({.log_info = false}).ok());
  EXPECT_EQ(control.Update({.log_verbose_level = 1}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(LogControlTest, FilesAreUnimplementedAndUnknownFormatsInvalid) {
  LogControl control;
  absl::StatusOr<protocol::LogSettings> file = control.Update({.log_file = "/tmp/x.log"});
  EXPECT_EQ(file.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(file.status().message()), HasSubstr("/tmp/x.log"));
  EXPECT_TRUE(control.Update({.log_file = ""}).ok());
  EXPECT_EQ(control.Update({.log_format = "json"}).status().code(),
            absl::StatusCode::kInvalidArgument);
  absl::StatusOr<protocol::LogSettings> iso = control.Update({.log_format = "ISO8601"});
  ASSERT_TRUE(iso.ok()) << iso.status();
  EXPECT_EQ(iso->log_format, "ISO8601");
  EXPECT_EQ(control.Update({.log_format = "default"})->log_format, "default");
}

}  // namespace
}  // namespace brigade
