#include "tools/analyze/cascade_config_file.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::analyze {
namespace {

using ::testing::HasSubstr;

constexpr char kRouter[] = R"(# The cascade { threshold: 0.5 } in this comment is not the field.
name: "cascade"
platform: "brigade_router"
routing {
  variant { name: "small" model_name: "small_model" }
  variant { name: "big" model_name: "big_model" }
  cascade {
    first: "small"   # threshold: 0.1 here neither
    second: "big"
    softmax: true
    threshold:   0.97
  }
}
)";

TEST(RewriteCascadeThresholdTest, ChangesOnlyTheThresholdValue) {
  absl::StatusOr<std::string> out =
      RewriteCascadeThreshold(kRouter, "config.pbtxt", "cascade", "cascade", "0.8123");
  ASSERT_TRUE(out.ok()) << out.status();
  std::string expected = kRouter;
  expected.replace(expected.find("0.97"), 4, "0.8123");
  EXPECT_EQ(*out, expected);
}

TEST(RewriteCascadeThresholdTest, AddsAThresholdTheCascadeLacks) {
  const std::string text =
      "platform: \"brigade_router\"\nrouting {\n  variant { name: \"a\" }\n  variant { name: "
      "\"b\" }\n  cascade { first: \"a\" second: \"b\" }\n}\n";
  absl::StatusOr<std::string> out = RewriteCascadeThreshold(text, "c.pbtxt", "r", "r", "0.9");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out,
            "platform: \"brigade_router\"\nrouting {\n  variant { name: \"a\" }\n  variant { name: "
            "\"b\" }\n  cascade { first: \"a\" second: \"b\" threshold: 0.9 }\n}\n");
}

TEST(RewriteCascadeThresholdTest, RefusesAnotherModelsConfig) {
  EXPECT_THAT(
      RewriteCascadeThreshold(kRouter, "config.pbtxt", "other", "other", "0.8").status().message(),
      HasSubstr("config of model 'cascade', not of router 'other'"));
  const std::string plain = "name: \"cascade\"\nplatform: \"onnxruntime_onnx\"\n";
  EXPECT_THAT(
      RewriteCascadeThreshold(plain, "config.pbtxt", "cascade", "x", "0.8").status().message(),
      HasSubstr("not a brigade_router with a routing.cascade"));
  EXPECT_FALSE(RewriteCascadeThreshold("name: {", "config.pbtxt", "cascade", "x", "0.8").ok());
}

TEST(RewriteCascadeThresholdTest, RefusesAThresholdThatDoesNotParse) {
  EXPECT_THAT(
      RewriteCascadeThreshold(kRouter, "config.pbtxt", "cascade", "x", "zero").status().message(),
      HasSubstr("would not give a config"));
}

}  // namespace
}  // namespace brigade::analyze
