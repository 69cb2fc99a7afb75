#include "tools/client/bearer_token.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::client {
namespace {

using ::testing::HasSubstr;

class BearerTokenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() /
             ("brigade-client-token-" + std::to_string(getpid())))
                .string();
  }
  void TearDown() override { std::filesystem::remove(path_); }
  void Write(const std::string& text, mode_t mode) {
    std::ofstream(path_, std::ios::trunc) << text;
    ASSERT_EQ(chmod(path_.c_str(), mode), 0);
  }
  std::string path_;
};

TEST_F(BearerTokenTest, ReadsTheFirstLineOfAnOwnerOnlyFile) {
  Write("\n  s3cret-token-value  \nignored\n", 0600);
  absl::StatusOr<std::string> token = ResolveBearerToken(path_, "from-environment");
  ASSERT_TRUE(token.ok()) << token.status();
  EXPECT_EQ(*token, "s3cret-token-value");
}

TEST_F(BearerTokenTest, RefusesAFileOthersMayRead) {
  Write("s3cret-token-value\n", 0644);
  absl::StatusOr<std::string> token = ResolveBearerToken(path_, nullptr);
  ASSERT_FALSE(token.ok());
  EXPECT_EQ(token.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(token.status().message(), HasSubstr("chmod 600"));
}

TEST_F(BearerTokenTest, FallsBackToTheEnvironmentThenToNone) {
  absl::StatusOr<std::string> from_environment = ResolveBearerToken("", "env-token\n");
  ASSERT_TRUE(from_environment.ok());
  EXPECT_EQ(*from_environment, "env-token");
  absl::StatusOr<std::string> none = ResolveBearerToken("", nullptr);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, "");
}

TEST_F(BearerTokenTest, RefusesATokenWithSpacesOrControlCharacters) {
  EXPECT_FALSE(ResolveBearerToken("", "two words").ok());
  EXPECT_FALSE(CheckBearerToken("tab\there").ok());
  EXPECT_FALSE(CheckBearerToken(std::string(kMaxBearerTokenChars + 1, 'a')).ok());
  EXPECT_TRUE(CheckBearerToken("").ok());
}

}  // namespace
}  // namespace brigade::client
