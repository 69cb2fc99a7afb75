#include "tools/analyze/config_generator.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "protocol/model_config_parser.h"
#include "tools/analyze/point_repository.h"

namespace brigade::analyze {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr char kBaseConfig[] = R"pb(
  name: "classifier"
  platform: "pytorch_libtorch"
  max_batch_size: 32 input
  [ {
    name: "image"
    data_type: TYPE_FP32
    dims: [ 1, 28, 28 ]
  }] output
  [ {
    name: "logits"
    data_type: TYPE_FP32
    dims: [ 10 ]
    label_filename: "labels.txt"
  }]
  dynamic_batching {
    preferred_batch_size: [ 4, 16 ]
    max_queue_delay_microseconds: 200
    priority_levels: 2
    default_priority_level: 1
  } instance_group
  [ {
    name: "cpu"
    count: 3
    kind: KIND_CPU
    cpus: [ 0, 1 ]
  }]
  parameters {
    key: "note"
    value { string_value: "kept" }
  }
)pb";

// A temporary folder removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "analyze-test-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void Write(const fs::path& path, std::string_view text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

std::string Read(const fs::path& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

config::ModelConfig Base() {
  absl::StatusOr<protocol::ParsedConfig> parsed =
      protocol::ParseModelConfigText(kBaseConfig, "base");
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  return parsed->config;
}

ServingConfig Point(std::string_view policy, int max_batch, int instances, int threads) {
  absl::StatusOr<BatchingPolicy> parsed = ParseBatchingPolicy(policy);
  EXPECT_TRUE(parsed.ok());
  return {.variant = 0,
          .max_batch_size = max_batch,
          .policy = *parsed,
          .instances = instances,
          .threads = threads,
          .effective_threads = threads > 0 ? threads : 1};
}

TEST(GenerateConfigTest, DelayPolicyKeepsQueueSettingsAndDropsUnreachablePreferredSizes) {
  absl::StatusOr<config::ModelConfig> config = GenerateConfig(Base(), Point("delay:500", 8, 2, 1));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->max_batch_size(), 8);
  ASSERT_TRUE(config->has_dynamic_batching());
  EXPECT_EQ(config->dynamic_batching().max_queue_delay_microseconds(), 500u);
  ASSERT_EQ(config->dynamic_batching().preferred_batch_size_size(), 1);
  EXPECT_EQ(config->dynamic_batching().preferred_batch_size(0), 4);
  EXPECT_EQ(config->dynamic_batching().priority_levels(), 2u);
  EXPECT_FALSE(config->has_adaptive_batching());
  ASSERT_EQ(config->instance_group_size(), 1);
  EXPECT_EQ(config->instance_group(0).count(), 2);
  EXPECT_EQ(config->instance_group(0).intra_op_threads(), 1);
  EXPECT_EQ(config->instance_group(0).kind(), config::ModelInstanceGroup::KIND_CPU);
  EXPECT_EQ(config->instance_group(0).name(), "cpu");
  // Inputs, outputs, platform and parameters are the variant's.
  EXPECT_EQ(config->platform(), "pytorch_libtorch");
  EXPECT_EQ(config->input(0).name(), "image");
  EXPECT_EQ(config->output(0).label_filename(), "labels.txt");
  EXPECT_EQ(config->parameters().at("note").string_value(), "kept");
}

TEST(GenerateConfigTest, NoneRemovesEveryBatchingSection) {
  absl::StatusOr<config::ModelConfig> config = GenerateConfig(Base(), Point("none", 1, 1, 0));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->max_batch_size(), 1);
  EXPECT_FALSE(config->has_dynamic_batching());
  EXPECT_FALSE(config->has_adaptive_batching());
  // Threads 0 leaves the server's default.
  EXPECT_EQ(config->instance_group(0).intra_op_threads(), 0);
}

TEST(GenerateConfigTest, AdaptivePoliciesReplaceTheSizeAndDelayRule) {
  absl::StatusOr<config::ModelConfig> config = GenerateConfig(Base(), Point("p99:4000", 16, 1, 2));
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_TRUE(config->has_adaptive_batching());
  EXPECT_EQ(config->adaptive_batching().policy(), config::ModelAdaptiveBatching::P99_MODEL);
  EXPECT_EQ(config->adaptive_batching().target_p99_microseconds(), 4000u);
  // The queue settings stay; the rule adaptive_batching replaces goes, so nothing is ignored.
  EXPECT_EQ(config->dynamic_batching().max_queue_delay_microseconds(), 0u);
  EXPECT_EQ(config->dynamic_batching().preferred_batch_size_size(), 0);
  EXPECT_EQ(config->dynamic_batching().priority_levels(), 2u);
  EXPECT_TRUE(protocol::IgnoredFields(*config).empty());

  config = GenerateConfig(Base(), Point("formula", 16, 1, 2));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->adaptive_batching().policy(), config::ModelAdaptiveBatching::QUEUE_FORMULA);
  EXPECT_EQ(config->adaptive_batching().target_p99_microseconds(), 0u);
}

TEST(GenerateConfigTest, VariantThatDoesNotBatchKeepsMaxBatchZero) {
  config::ModelConfig base = Base();
  base.set_max_batch_size(0);
  base.clear_dynamic_batching();
  absl::StatusOr<config::ModelConfig> config = GenerateConfig(base, Point("delay:100", 0, 1, 1));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->max_batch_size(), 0);
  EXPECT_FALSE(config->has_dynamic_batching());
}

TEST(GenerateConfigTest, RefusesWhatTheServerWouldRefuse) {
  // The server's own validation decides, and the message names the point.
  absl::StatusOr<config::ModelConfig> bad = GenerateConfig(Base(), Point("none", 4, -1, 1));
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("mb=4 none i=-1"));
  EXPECT_THAT(bad.status().message(), HasSubstr("negative count"));
}

TEST(GenerateConfigTest, TextRoundTripsThroughTheServersParser) {
  absl::StatusOr<config::ModelConfig> config = GenerateConfig(Base(), Point("delay:250", 8, 1, 2));
  ASSERT_TRUE(config.ok());
  const std::string text = ConfigToText(*config, "generated for a test\nsecond line");
  EXPECT_EQ(text.rfind("# generated for a test\n# second line\n", 0), 0u);
  absl::StatusOr<protocol::ParsedConfig> parsed = protocol::ParseModelConfigText(text, "generated");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(parsed->skipped.empty());
  EXPECT_EQ(parsed->config.SerializeAsString(), config->SerializeAsString());
}

TEST(ReadVariantConfigTest, NamesTheVariantByLabelConfigOrDirectory) {
  TempDir dir;
  Write(dir.path() / "resnet_int8" / "config.pbtxt", "max_batch_size: 4");
  absl::StatusOr<config::ModelConfig> config =
      ReadVariantConfig((dir.path() / "resnet_int8").string(), "");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->name(), "resnet_int8");
  config = ReadVariantConfig((dir.path() / "resnet_int8/").string(), "");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->name(), "resnet_int8");
  config = ReadVariantConfig((dir.path() / "resnet_int8").string(), "int8");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->name(), "int8");

  Write(dir.path() / "m2" / "config.pbtxt", kBaseConfig);
  config = ReadVariantConfig((dir.path() / "m2").string(), "");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->name(), "classifier");
}

TEST(ReadVariantConfigTest, NeedsAConfigFile) {
  TempDir dir;
  fs::create_directories(dir.path() / "bare" / "1");
  absl::StatusOr<config::ModelConfig> config =
      ReadVariantConfig((dir.path() / "bare").string(), "");
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.status().message(), HasSubstr("no config.pbtxt"));
}

TEST(WritePointRepositoryTest, WritesTheConfigAndLinksEverythingElse) {
  TempDir dir;
  const fs::path variant = dir.path() / "variant";
  Write(variant / "config.pbtxt", kBaseConfig);
  Write(variant / "labels.txt", "a\nb\n");
  Write(variant / "1" / "model.pt", "weights");
  absl::StatusOr<config::ModelConfig> config = GenerateConfig(Base(), Point("delay:100", 8, 1, 1));
  ASSERT_TRUE(config.ok());
  const fs::path root = dir.path() / "repo";
  ASSERT_TRUE(WritePointRepository(variant.string(), *config, "header", root.string()).ok());

  const fs::path model = root / "classifier";
  EXPECT_TRUE(fs::is_symlink(model / "1"));
  EXPECT_TRUE(fs::is_symlink(model / "labels.txt"));
  EXPECT_EQ(Read(model / "1" / "model.pt"), "weights");
  EXPECT_FALSE(fs::is_symlink(model / "config.pbtxt"));
  absl::StatusOr<protocol::ParsedConfig> written =
      protocol::ReadModelConfigFile(model.string(), "classifier");
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(written->config.max_batch_size(), 8);
  // The variant's own config is untouched.
  EXPECT_EQ(Read(variant / "config.pbtxt"), kBaseConfig);
  // A second layout into the same (now full) folder is refused.
  EXPECT_FALSE(WritePointRepository(variant.string(), *config, "", root.string()).ok());
}

}  // namespace
}  // namespace brigade::analyze
