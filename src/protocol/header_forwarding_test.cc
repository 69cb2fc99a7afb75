#include "protocol/header_forwarding.h"

#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::protocol {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<HeaderForwarding> Make(std::string_view pattern) {
  absl::StatusOr<std::unique_ptr<HeaderForwarding>> made =
      HeaderForwarding::Create(pattern, "--http-header-forward-pattern");
  EXPECT_TRUE(made.ok()) << made.status();
  return made.ok() ? *std::move(made) : nullptr;
}

TEST(HeaderForwardingTest, MatchingHeadersBecomeStringParameters) {
  std::unique_ptr<HeaderForwarding> forwarding = Make("^x-user-");
  Parameters parameters;
  size_t forwarded = 0;
  ASSERT_TRUE(forwarding->Forward("x-user-tier", "gold", &parameters, &forwarded).ok());
  ASSERT_TRUE(
      forwarding->Forward("content-type", "application/json", &parameters, &forwarded).ok());
  EXPECT_EQ(parameters.GetString("x-user-tier"), "gold");
  EXPECT_FALSE(parameters.Contains("content-type"));
  EXPECT_EQ(forwarded, 1u);
}

TEST(HeaderForwardingTest, MatchesAnywhereInTheLowerCaseName) {
  EXPECT_TRUE(Make("user")->Matches("x-user-id"));
  EXPECT_FALSE(Make("^user")->Matches("x-user-id"));
  EXPECT_TRUE(Make("my_header")->Matches("MY_HEADER_1"));
  EXPECT_FALSE(Make("MY_HEADER")->Matches("MY_HEADER_1"));  // the name is matched in lower case
  EXPECT_TRUE(Make("(?i)MY_HEADER")->Matches("my_header_1"));
}

TEST(HeaderForwardingTest, TheParameterIsNamedInLowerCase) {
  std::unique_ptr<HeaderForwarding> forwarding = Make("^x-");
  Parameters parameters;
  size_t forwarded = 0;
  ASSERT_TRUE(forwarding->Forward("X-User-Tier", "Gold", &parameters, &forwarded).ok());
  EXPECT_EQ(parameters.GetString("x-user-tier"), "Gold");  // the value as sent
}

TEST(HeaderForwardingTest, TheBodysParameterWinsOverAHeaderOfTheSameName) {
  std::unique_ptr<HeaderForwarding> forwarding = Make(".*");
  Parameters parameters;
  parameters.Set("tier", std::string("from-body"));
  size_t forwarded = 0;
  ASSERT_TRUE(forwarding->Forward("tier", "from-header", &parameters, &forwarded).ok());
  EXPECT_EQ(parameters.GetString("tier"), "from-body");
}

TEST(HeaderForwardingTest, AuthorizationIsNeverForwarded) {
  std::unique_ptr<HeaderForwarding> forwarding = Make(".*");
  EXPECT_FALSE(forwarding->Matches("Authorization"));
  Parameters parameters;
  size_t forwarded = 0;
  ASSERT_TRUE(forwarding->Forward("authorization", "Bearer s3cret", &parameters, &forwarded).ok());
  EXPECT_TRUE(parameters.empty());
}

TEST(HeaderForwardingTest, AHeaderNamingAReservedParameterIsRefusedByName) {
  std::unique_ptr<HeaderForwarding> forwarding = Make(".*");
  for (const char* name : {"priority", "timeout", "sequence_id", "triton_anything"}) {
    Parameters parameters;
    size_t forwarded = 0;
    const absl::Status status = forwarding->Forward(name, "1", &parameters, &forwarded);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << name;
    EXPECT_THAT(status.message(), HasSubstr(std::string("header '") + name + "'"));
    EXPECT_TRUE(parameters.empty());
  }
}

TEST(HeaderForwardingTest, CountsAndSizesAreBounded) {
  std::unique_ptr<HeaderForwarding> forwarding = Make("^x-");
  Parameters parameters;
  size_t forwarded = 0;
  for (size_t i = 0; i < kMaxForwardedHeaders; ++i) {
    ASSERT_TRUE(forwarding->Forward("x-h" + std::to_string(i), "v", &parameters, &forwarded).ok());
  }
  EXPECT_THAT(forwarding->Forward("x-one-more", "v", &parameters, &forwarded).message(),
              HasSubstr("more than 64 headers"));
  forwarded = 0;
  EXPECT_THAT(
      forwarding
          ->Forward("x-big", std::string(kMaxForwardedValueBytes + 1, 'a'), &parameters, &forwarded)
          .message(),
      HasSubstr("the limit is 8192"));
}

TEST(HeaderForwardingTest, ABadPatternIsRefusedNamingTheFlag) {
  absl::StatusOr<std::unique_ptr<HeaderForwarding>> made =
      HeaderForwarding::Create("(unclosed", "--grpc-header-forward-pattern");
  ASSERT_FALSE(made.ok());
  EXPECT_THAT(made.status().message(), HasSubstr("--grpc-header-forward-pattern '(unclosed'"));
}

}  // namespace
}  // namespace brigade::protocol
