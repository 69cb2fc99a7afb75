#include "protocol/model_config_parser.h"

#include <algorithm>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::protocol {
namespace {

using ::testing::HasSubstr;

// A Triton config for an ONNX model using sections Brigade does not implement, plus a field
// neither schema knows.
constexpr char kTritonConfig[] = R"pb(
  name: "densenet_onnx"
  platform: "onnxruntime_onnx"
  max_batch_size: 8 input
  [ {
    name: "data_0"
    data_type: TYPE_FP32
    format: FORMAT_NCHW
    dims: [ 3, 224, 224 ]
    reshape: { shape: [ 1, 3, 224, 224 ] }
  }] output
  [ {
    name: "fc6_1"
    data_type: TYPE_FP32
    dims: [ 1000 ]
    reshape: { shape: [ 1, 1000, 1, 1 ] }
    label_filename: "densenet_labels.txt"
  }] instance_group
  [ {
    count: 2
    kind: KIND_GPU
    gpus: [ 0 ]
  }]
  optimization {
    execution_accelerators {
      gpu_execution_accelerator:
      [ { name: "tensorrt" }]
    }
  }
  dynamic_batching {
    preferred_batch_size: [ 4, 8 ]
    max_queue_delay_microseconds: 100
  } model_warmup
  [ {
    name: "w"
    batch_size: 1
    inputs {
      key: "data_0"
      value {
        data_type: TYPE_FP32
        dims: [ 3, 224, 224 ]
        zero_data: true
      }
    }
  }]
  some_future_field: 42
)pb";

TEST(ConfigParserTest, TritonConfigParsesAndReportsWhatIsIgnored) {
  auto parsed = ParseModelConfigText(kTritonConfig, "config.pbtxt");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->config.input(0).dims_size(), 3);
  ASSERT_EQ(parsed->skipped.size(), 1u);
  EXPECT_NE(parsed->skipped[0].find("some_future_field"), std::string::npos);
  EXPECT_TRUE(ValidateModelConfig("densenet_onnx", &parsed->config).ok());
  const auto ignored = IgnoredFields(parsed->config);
  auto has = [&](std::string_view text) {
    return std::any_of(ignored.begin(), ignored.end(),
                       [&](const std::string& s) { return s.find(text) != std::string::npos; });
  };
  EXPECT_TRUE(has("optimization"));
  EXPECT_TRUE(has("KIND_GPU"));
  EXPECT_FALSE(has("dynamic_batching"));
}

TEST(ConfigParserTest, SyntaxErrorsNameFileLineAndColumn) {
  auto parsed = ParseModelConfigText("name: \"m\"\nmax_batch_size: \"eight\"\n", "m/config.pbtxt");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(parsed.status().message().find("m/config.pbtxt:2:"), std::string::npos)
      << parsed.status();
}

TEST(ConfigParserTest, UnknownEnumValuesAreErrors) {
  auto parsed = ParseModelConfigText("input [{ name: \"x\" data_type: TYPE_FP33 dims: [1] }]", "c");
  EXPECT_FALSE(parsed.ok());
}

TEST(ConfigParserTest, ValidationNamesTheFieldAtFault) {
  struct Case {
    const char* text;
    const char* expected;
  };
  const Case cases[] = {
      {"name: \"other\"", "does not match"},
      {"max_batch_size: -1", "negative"},
      {"input [{ name: \"x\" dims: [1] }]", "'x' needs a data_type"},
      {"input [{ name: \"x\" data_type: TYPE_FP32 dims: [0] }]", "invalid dims"},
      {"input [{ name: \"x\" data_type: TYPE_FP32 dims: [4] }, { name: \"x\" data_type: "
       "TYPE_FP32 dims: [4] }]",
       "declared twice"},
      {"input [{ name: \"x\" data_type: TYPE_FP32 dims: [4] reshape { shape: [3] } }]",
       "reshape [3] has 3 elements"},
      {"max_batch_size: 4 dynamic_batching { preferred_batch_size: [8] }",
       "preferred_batch_size 8"},
      {"max_batch_size: 4 dynamic_batching { priority_levels: 2 default_priority_level: 3 }",
       "default_priority_level 3"},
      {"max_batch_size: 4 dynamic_batching { priority_levels: 2 default_priority_level: 1 "
       "priority_queue_policy { key: 3 value { max_queue_size: 1 } } }",
       "priority_queue_policy level 3"},
      {"adaptive_batching { target_p99_microseconds: 1000 }", "needs max_batch_size > 0"},
      {"max_batch_size: 4 adaptive_batching { }", "needs target_p99_microseconds"},
      {"max_batch_size: 4 adaptive_batching { target_p99_microseconds: 1000 max_batch_size: 8 }",
       "adaptive_batching.max_batch_size 8"},
      {"max_batch_size: 4 sequence_batching { } adaptive_batching { policy: QUEUE_FORMULA }",
       "cannot be combined"},
  };
  for (const Case& c : cases) {
    auto parsed = ParseModelConfigText(c.text, "c");
    ASSERT_TRUE(parsed.ok()) << c.text;
    absl::Status status = ValidateModelConfig("m", &parsed->config);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.text;
    EXPECT_NE(status.message().find(c.expected), std::string::npos) << status << " for " << c.text;
  }
}

TEST(ConfigParserTest, MissingNameIsTakenFromTheDirectory) {
  auto parsed = ParseModelConfigText("max_batch_size: 2", "c");
  ASSERT_TRUE(ValidateModelConfig("dir_name", &parsed->config).ok());
  EXPECT_EQ(parsed->config.name(), "dir_name");
}

TEST(ConfigParserTest, JsonOverrideUsesTheSameSchema) {
  auto parsed = ParseModelConfigJson(
      R"({"name":"m","max_batch_size":4,"input":[{"name":"x","data_type":"TYPE_FP32","dims":[2]}],"unknown":1})",
      "override");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->config.max_batch_size(), 4);
  EXPECT_EQ(parsed->config.input(0).data_type(), config::TYPE_FP32);
  EXPECT_FALSE(ParseModelConfigJson("{not json", "override").ok());
}

TEST(ConfigParserTest, ConfigJsonUsesProtoFieldNames) {
  config::ModelConfig config;
  config.set_name("m");
  config.set_max_batch_size(8);
  auto json = ModelConfigToJson(config);
  ASSERT_TRUE(json.ok());
  EXPECT_NE(json->find("\"max_batch_size\":8"), std::string::npos) << *json;
}

TEST(ConfigParserTest, DataTypesConvertBothWays) {
  for (int i = 1; i < kNumDataTypes; ++i) {
    const auto type = static_cast<DataType>(i);
    EXPECT_EQ(FromConfigDataType(ToConfigDataType(type)), type) << DataTypeName(type);
  }
}

TEST(ConfigParserTest, QueuePoliciesOrderingAndAdaptiveBatchingAreActedOn) {
  auto parsed = ParseModelConfigText(
      R"pb(
        max_batch_size: 8
        dynamic_batching {
          preserve_ordering: true
          priority_levels: 2
          default_priority_level: 2
          default_queue_policy { timeout_action: DELAY default_timeout_microseconds: 100 }
          priority_queue_policy {
            key: 1
            value { allow_timeout_override: true max_queue_size: 4 }
          }
          admission_control: true
        }
        adaptive_batching { policy: P99_MODEL target_p99_microseconds: 5000 max_batch_size: 4 }
      )pb",
      "c");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_TRUE(ValidateModelConfig("m", &parsed->config).ok());
  EXPECT_EQ(parsed->config.adaptive_batching().target_p99_microseconds(), 5000u);
  EXPECT_TRUE(parsed->config.dynamic_batching().admission_control());
  EXPECT_TRUE(IgnoredFields(parsed->config).empty());
}

TEST(ConfigParserTest, AdaptiveBatchingOverridesTheFixedDelayAndSaysSo) {
  auto parsed = ParseModelConfigText(
      "max_batch_size: 8 dynamic_batching { max_queue_delay_microseconds: 100 } "
      "adaptive_batching { policy: QUEUE_FORMULA }",
      "c");
  ASSERT_TRUE(parsed.ok());
  ASSERT_TRUE(ValidateModelConfig("m", &parsed->config).ok());
  const auto ignored = IgnoredFields(parsed->config);
  ASSERT_EQ(ignored.size(), 1u);
  EXPECT_NE(ignored[0].find("adaptive_batching decides"), std::string::npos);
}

TEST(ConfigParserTest, AnEnsembleNeedsItsPlatformItsStepsAndItsTensors) {
  constexpr std::string_view kEnsemble = R"pb(
    name: "e"
    platform: "ensemble"
    input {
      name: "IN"
      data_type: TYPE_FP32
      dims: [ 4 ]
    }
    output {
      name: "OUT"
      data_type: TYPE_FP32
      dims: [ 4 ]
    }
    ensemble_scheduling {
      step {
        model_name: "m"
        model_version: -1
        input_map { key: "x" value: "IN" }
        output_map { key: "y" value: "OUT" }
        timeout_microseconds: 5000
        retries: 2
        fallback_model_name: "m_small"
      }
    }
  )pb";
  auto parsed = ParseModelConfigText(kEnsemble, "c");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(ValidateModelConfig("e", &parsed->config).ok());
  EXPECT_TRUE(IgnoredFields(parsed->config).empty());
  EXPECT_EQ(parsed->config.ensemble_scheduling().step(0).retries(), 2u);

  config::ModelConfig no_section = parsed->config;
  no_section.clear_ensemble_scheduling();
  absl::Status status = ValidateModelConfig("e", &no_section);
  EXPECT_NE(status.message().find("needs an ensemble_scheduling section"), std::string::npos)
      << status;

  config::ModelConfig no_platform = parsed->config;
  no_platform.clear_platform();
  status = ValidateModelConfig("e", &no_platform);
  EXPECT_NE(status.message().find("ensemble_scheduling needs platform"), std::string::npos)
      << status;

  config::ModelConfig no_outputs = parsed->config;
  no_outputs.clear_output();
  status = ValidateModelConfig("e", &no_outputs);
  EXPECT_NE(status.message().find("must declare its inputs and outputs"), std::string::npos)
      << status;
}

TEST(ConfigParserTest, ARouterNeedsItsPlatformAndItsRoutingSection) {
  auto parsed = ParseModelConfigText(
      R"pb(name: "r"
           platform: "brigade_router"
           routing { variant { model_name: "a" } })pb",
      "c");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(ValidateModelConfig("r", &parsed->config).ok());
  config::ModelConfig no_section = parsed->config;
  no_section.clear_routing();
  EXPECT_NE(ValidateModelConfig("r", &no_section).message().find("needs a routing section"),
            std::string::npos);
  config::ModelConfig no_platform = parsed->config;
  no_platform.clear_platform();
  EXPECT_NE(ValidateModelConfig("r", &no_platform).message().find("routing needs platform"),
            std::string::npos);
}

TEST(ConfigParserTest, AttachedStepsDeclareTheClientsTensorsOnAModelThatRuns) {
  auto parsed = ParseModelConfigText(
      R"pb(name: "m"
           platform: "onnxruntime_onnx"
           input {
             name: "x"
             data_type: TYPE_FP32
             dims: [ 4 ]
           }
           output {
             name: "y"
             data_type: TYPE_FP32
             dims: [ 4 ]
           }
           preprocess {
             parameters { key: "step" value: "image_classify_preprocess" }
             input {
               name: "IMAGE"
               data_type: TYPE_STRING
               dims: [ 1 ]
             }
           }
           postprocess {
             parameters { key: "step" value: "top_k" }
             output {
               name: "CLASS"
               data_type: TYPE_INT64
               dims: [ 1 ]
             }
           })pb",
      "c");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_TRUE(ValidateModelConfig("m", &parsed->config).ok());
  auto error = [&](auto edit) {
    config::ModelConfig config = parsed->config;
    edit(config);
    return std::string(ValidateModelConfig("m", &config).message());
  };
  EXPECT_THAT(error([](auto& c) { c.mutable_preprocess()->mutable_parameters()->clear(); }),
              HasSubstr("preprocess has no parameter \"step\""));
  EXPECT_THAT(error([](auto& c) { c.mutable_preprocess()->clear_input(); }),
              HasSubstr("preprocess declares the inputs clients send"));
  EXPECT_THAT(error([](auto& c) { c.mutable_postprocess()->add_input()->set_name("z"); }),
              HasSubstr("postprocess declares the outputs clients get (output), and no input"));
  EXPECT_THAT(error([](auto& c) { c.clear_input(); }),
              HasSubstr("preprocess needs the model's inputs declared"));
  EXPECT_THAT(error([](auto& c) { c.set_platform("brigade_process"); }),
              HasSubstr("not to an ensemble, a router or a brigade_process step"));
  EXPECT_THAT(error([](auto& c) { c.mutable_preprocess()->mutable_input(0)->clear_name(); }),
              HasSubstr("preprocess input"));
}

// [2^62, 2^62, 4] and [2^62, 2^62, 8] both wrap to 0 in an unchecked int64 product, so they
// used to compare equal (and the product is undefined behaviour on the way).
TEST(ConfigParserTest, ReshapeElementCountsThatOverflowAreRefused) {
  auto parsed =
      ParseModelConfigText(R"pb(
                             input {
                               name: "x"
                               data_type: TYPE_FP32
                               dims: [ 4611686018427387904, 4611686018427387904, 4 ]
                               reshape { shape: [ 4611686018427387904, 4611686018427387904, 8 ] }
                             })pb",
                           "c");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  absl::Status status = ValidateModelConfig("m", &parsed->config);
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("input 'x' dims [4611686018427387904,"));
  EXPECT_THAT(status.message(), HasSubstr("more elements than an int64 counts"));

  // The reshape side alone overflowing is caught too.
  parsed->config.mutable_input(0)->clear_dims();
  parsed->config.mutable_input(0)->add_dims(1);
  status = ValidateModelConfig("m", &parsed->config);
  EXPECT_THAT(status.message(), HasSubstr("input 'x' reshape ["));
  EXPECT_THAT(status.message(), HasSubstr("more elements than an int64 counts"));
}

TEST(ConfigParserTest, InstanceCountsThatAddUpPastAnIntAreRefused) {
  config::ModelConfig config;
  for (int i = 0; i < 3; ++i) config.add_instance_group()->set_count(1'000'000'000);
  absl::Status status = ValidateModelConfig("m", &config);
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("instance_group counts add up to more than"));
}

// max_batch_size: 60000000 sized statistics tables and warm-up tensors past the host's memory
// (std::bad_alloc ended the process); 500 instances are 500 threads.
TEST(ConfigParserTest, BatchSizesInstanceCountsAndWarmUpsPastTheLimitsAreRefused) {
  auto message = [](std::string_view text) {
    auto parsed = ParseModelConfigText(text, "c");
    EXPECT_TRUE(parsed.ok()) << parsed.status();
    return std::string(ValidateModelConfig("m", &parsed->config).message());
  };
  EXPECT_THAT(message("max_batch_size: 60000000"),
              HasSubstr("max_batch_size 60000000 exceeds the limit of 65536"));
  EXPECT_EQ(message("max_batch_size: 65536"), "");
  EXPECT_THAT(message("instance_group { count: 500 }"),
              HasSubstr("add up to more than 256 instances"));
  EXPECT_THAT(message("instance_group [ { count: 200 }, { count: 57 } ]"),
              HasSubstr("add up to more than 256 instances"));
  EXPECT_EQ(message("instance_group [ { count: 200 }, { count: 56 } ]"), "");
  EXPECT_THAT(message("max_batch_size: 8 model_warmup { name: \"w\" batch_size: 9 }"),
              HasSubstr("warm-up 'w' batch_size 9 exceeds max_batch_size (8)"));
  EXPECT_THAT(message("max_batch_size: 8 model_warmup { name: \"w\" count: 1001 }"),
              HasSubstr("warm-up 'w' count 1001 exceeds the limit of 1000"));
}

}  // namespace
}  // namespace brigade::protocol
