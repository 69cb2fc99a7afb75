#include "protocol/http/model_config_json.h"

#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "protocol/model_config.pb.h"

namespace brigade::protocol::http {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

config::ModelConfig Parse(const std::string& text) {
  config::ModelConfig config;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &config));
  return config;
}

TEST(ModelConfigJsonTest, WritesInt64AsNumbersAndEnumsByName) {
  const std::string json = EncodeModelConfig(Parse(R"pb(
    name: "resnet"
    max_batch_size: 8
    input {
      name: "x"
      data_type: TYPE_FP32
      dims: [ 3, 224, 224 ]
    }
    dynamic_batching {
      max_queue_delay_microseconds: 100
      preferred_batch_size: [ 4, 8 ]
    }
  )pb"));
  EXPECT_THAT(json, HasSubstr(R"("name":"resnet")"));
  EXPECT_THAT(json, HasSubstr(R"("max_batch_size":8)"));
  EXPECT_THAT(json, HasSubstr(R"("data_type":"TYPE_FP32")"));
  EXPECT_THAT(json, HasSubstr(R"("dims":[3,224,224])"));
  EXPECT_THAT(json, HasSubstr(R"("max_queue_delay_microseconds":100)"));
  EXPECT_THAT(json, HasSubstr(R"("preferred_batch_size":[4,8])"));
}

TEST(ModelConfigJsonTest, PrintsDefaultScalarsAndEmptyRepeatedButNotUnsetMessages) {
  const std::string json = EncodeModelConfig(Parse(R"pb(name: "m")pb"));
  EXPECT_THAT(json, HasSubstr(R"("max_batch_size":0)"));
  EXPECT_THAT(json, HasSubstr(R"("platform":"")"));
  EXPECT_THAT(json, HasSubstr(R"("input":[])"));
  EXPECT_THAT(json, HasSubstr(R"("parameters":{})"));
  EXPECT_THAT(json, Not(HasSubstr("dynamic_batching")));  // unset oneof member
  EXPECT_THAT(json, Not(HasSubstr("version_policy")));    // unset message
  EXPECT_EQ(json.front(), '{');
  EXPECT_EQ(json.back(), '}');
}

TEST(ModelConfigJsonTest, WritesMapsSortedByKey) {
  const std::string json = EncodeModelConfig(Parse(R"pb(
    parameters {
      key: "z"
      value { string_value: "1" }
    }
    parameters {
      key: "a"
      value { string_value: "2" }
    }
  )pb"));
  EXPECT_THAT(json,
              HasSubstr(R"("parameters":{"a":{"string_value":"2"},"z":{"string_value":"1"}})"));
}

TEST(ModelConfigJsonTest, WritesOneofMembersThatAreSet) {
  const std::string json =
      EncodeModelConfig(Parse(R"pb(
        version_policy { specific { versions: [ 1, 3 ] } }
      )pb"));
  EXPECT_THAT(json, HasSubstr(R"("version_policy":{"specific":{"versions":[1,3]}})"));
}

}  // namespace
}  // namespace brigade::protocol::http
