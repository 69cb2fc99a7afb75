#include "cache/cache_config.h"

#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace brigade::cache {
namespace {

using ::testing::HasSubstr;

config::ModelResponseCache Parse(const std::string& text) {
  config::ModelResponseCache config;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &config)) << text;
  return config;
}

TEST(CacheConfigTest, DisabledCacheYieldsNoOptions) {
  auto options = ResponseCacheOptionsFromConfig("m", Parse(""));
  ASSERT_TRUE(options.ok());
  EXPECT_FALSE(options->has_value());
}

TEST(CacheConfigTest, TritonsEnableAloneGetsTheDefaults) {
  auto options = ResponseCacheOptionsFromConfig("m", Parse("enable: true"));
  ASSERT_TRUE(options.ok() && options->has_value());
  const ResponseCacheOptions& o = **options;
  EXPECT_EQ(o.tier, Tier::kMemory);
  EXPECT_EQ(o.ttl_ms, kDefaultTtlMs);
  EXPECT_EQ(o.max_bytes, kDefaultMaxBytes);
  EXPECT_TRUE(o.key_parameters.empty());
  EXPECT_TRUE(o.coalesce);
}

TEST(CacheConfigTest, BrigadeFieldsAreRead) {
  auto options = ResponseCacheOptionsFromConfig("m", Parse(R"(
    enable: true
    tier: TIER_BOTH
    ttl_ms: 1500
    max_bytes: 1048576
    key_parameters: "temperature"
    key_parameters: "top_k"
    disable_coalescing: true
  )"));
  ASSERT_TRUE(options.ok() && options->has_value());
  const ResponseCacheOptions& o = **options;
  EXPECT_EQ(o.tier, Tier::kBoth);
  EXPECT_EQ(o.ttl_ms, 1500);
  EXPECT_EQ(o.max_bytes, 1048576u);
  EXPECT_EQ(o.key_parameters, (std::vector<std::string>{"temperature", "top_k"}));
  EXPECT_FALSE(o.coalesce);
  EXPECT_EQ((*ResponseCacheOptionsFromConfig("m", Parse("enable: true tier: TIER_REDIS")))->tier,
            Tier::kRedis);
}

TEST(CacheConfigTest, OutOfRangeValuesNameTheModelAndField) {
  auto ttl = ResponseCacheOptionsFromConfig("resnet", Parse("enable: true ttl_ms: 99999999999"));
  ASSERT_FALSE(ttl.ok());
  EXPECT_THAT(ttl.status().message(), HasSubstr("model 'resnet'"));
  EXPECT_THAT(ttl.status().message(), HasSubstr("ttl_ms"));
  auto name = ResponseCacheOptionsFromConfig("resnet", Parse(R"(enable: true key_parameters: "")"));
  ASSERT_FALSE(name.ok());
  EXPECT_THAT(name.status().message(), HasSubstr("key_parameters"));
}

}  // namespace
}  // namespace brigade::cache
