#include "protocol/grpc/admin_messages.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::protocol::grpc {
namespace {

using ::testing::ElementsAre;

TEST(GrpcAdminCodecTest, ServerMetadataListsExtensions) {
  protocol::ServerMetadata metadata{"brigade", "0.1.0", {"model_repository", "statistics"}};
  inference::ServerMetadataResponse out;
  EncodeServerMetadata(metadata, &out);
  EXPECT_EQ(out.name(), "brigade");
  EXPECT_EQ(out.version(), "0.1.0");
  EXPECT_THAT(out.extensions(), ElementsAre("model_repository", "statistics"));
}

TEST(GrpcAdminCodecTest, ModelMetadataUsesProtocolTypeNamesAndVariableDims) {
  protocol::ModelMetadata metadata;
  metadata.name = "resnet";
  metadata.versions = {"1", "2"};
  metadata.platform = "onnxruntime_onnx";
  metadata.inputs.push_back({"x", DataType::kFp32, {-1, 3, 224, 224}, ""});
  metadata.outputs.push_back({"y", DataType::kBytes, {-1}, ""});
  inference::ModelMetadataResponse out;
  EncodeModelMetadata(metadata, &out);
  EXPECT_EQ(out.name(), "resnet");
  EXPECT_THAT(out.versions(), ElementsAre("1", "2"));
  EXPECT_EQ(out.platform(), "onnxruntime_onnx");
  ASSERT_EQ(out.inputs_size(), 1);
  EXPECT_EQ(out.inputs(0).name(), "x");
  EXPECT_EQ(out.inputs(0).datatype(), "FP32");
  EXPECT_THAT(out.inputs(0).shape(), ElementsAre(-1, 3, 224, 224));
  ASSERT_EQ(out.outputs_size(), 1);
  EXPECT_EQ(out.outputs(0).datatype(), "BYTES");
}

TEST(GrpcAdminCodecTest, RepositoryIndexKeepsEveryField) {
  const std::vector<protocol::RepositoryIndexEntry> entries = {
      {"a", "1", "READY", ""}, {"b", "", "UNAVAILABLE", "bad config"}};
  inference::RepositoryIndexResponse out;
  EncodeRepositoryIndex(entries, &out);
  ASSERT_EQ(out.models_size(), 2);
  EXPECT_EQ(out.models(0).name(), "a");
  EXPECT_EQ(out.models(0).version(), "1");
  EXPECT_EQ(out.models(0).state(), "READY");
  EXPECT_EQ(out.models(1).state(), "UNAVAILABLE");
  EXPECT_EQ(out.models(1).reason(), "bad config");
}

TEST(GrpcAdminCodecTest, StatisticsMapOneForOneOntoTritonsFields) {
  protocol::ModelStatistics snapshot;
  snapshot.name = "m";
  snapshot.version = "3";
  snapshot.last_inference_ms = 1'700'000'000'000;
  snapshot.inference_count = 40;
  snapshot.execution_count = 10;
  protocol::InferStatistics& s = snapshot.inference_stats;
  s.success = {11, 1100};
  s.fail = {1, 100};
  s.queue = {12, 1200};
  s.compute_input = {13, 1300};
  s.compute_infer = {14, 1400};
  s.compute_output = {15, 1500};
  s.cache_hit = {16, 1600};
  s.cache_miss = {17, 1700};
  snapshot.batch_stats.push_back({4, {10, 20}, {10, 30}, {10, 40}});
  snapshot.stage_latency.push_back({"receive", 0, 0, 0, 0});
  snapshot.stage_latency.push_back({"total", 40, 1500, 2500, 9000});
  inference::ModelStatisticsResponse out;
  EncodeModelStatistics(std::vector<protocol::ModelStatistics>{snapshot}, &out);

  ASSERT_EQ(out.model_stats_size(), 1);
  const inference::ModelStatistics& m = out.model_stats(0);
  EXPECT_EQ(m.name(), "m");
  EXPECT_EQ(m.version(), "3");
  EXPECT_EQ(m.last_inference(), 1'700'000'000'000u);
  EXPECT_EQ(m.inference_count(), 40u);
  EXPECT_EQ(m.execution_count(), 10u);
  const inference::InferStatistics& i = m.inference_stats();
  EXPECT_EQ(i.success().count(), 11u);
  EXPECT_EQ(i.success().ns(), 1100u);
  EXPECT_EQ(i.fail().ns(), 100u);
  EXPECT_EQ(i.queue().count(), 12u);
  EXPECT_EQ(i.compute_input().ns(), 1300u);
  EXPECT_EQ(i.compute_infer().count(), 14u);
  EXPECT_EQ(i.compute_output().ns(), 1500u);
  EXPECT_EQ(i.cache_hit().count(), 16u);
  EXPECT_EQ(i.cache_miss().ns(), 1700u);
  ASSERT_EQ(m.batch_stats_size(), 1);
  EXPECT_EQ(m.batch_stats(0).batch_size(), 4u);
  EXPECT_EQ(m.batch_stats(0).compute_input().ns(), 20u);
  EXPECT_EQ(m.batch_stats(0).compute_infer().ns(), 30u);
  EXPECT_EQ(m.batch_stats(0).compute_output().ns(), 40u);
  EXPECT_TRUE(m.memory_usage().empty());
  EXPECT_TRUE(m.response_stats().empty());
  // Brigade's per-stage percentiles; stages that never ran are left out.
  ASSERT_EQ(m.brigade_stage_latency_size(), 1);
  EXPECT_EQ(m.brigade_stage_latency(0).stage(), "total");
  EXPECT_EQ(m.brigade_stage_latency(0).count(), 40u);
  EXPECT_DOUBLE_EQ(m.brigade_stage_latency(0).p50_us(), 1.5);
  EXPECT_DOUBLE_EQ(m.brigade_stage_latency(0).p99_us(), 9.0);
}

TEST(GrpcAdminCodecTest, LoadTakesTheConfigParameter) {
  inference::RepositoryModelLoadRequest request;
  request.set_model_name("m");
  (*request.mutable_parameters())["config"].set_string_param(R"({"max_batch_size": 4})");
  absl::StatusOr<protocol::LoadModelRequest> load = DecodeRepositoryModelLoad(request);
  ASSERT_TRUE(load.ok()) << load.status();
  EXPECT_EQ(load->name, "m");
  EXPECT_EQ(load->config_json, R"({"max_batch_size": 4})");
}

TEST(GrpcAdminCodecTest, LoadRejectsWhatItCannotHonour) {
  inference::RepositoryModelLoadRequest unnamed;
  EXPECT_EQ(DecodeRepositoryModelLoad(unnamed).status().code(), absl::StatusCode::kInvalidArgument);

  inference::RepositoryModelLoadRequest file;
  file.set_model_name("m");
  (*file.mutable_parameters())["file:1/model.onnx"].set_bytes_param("...");
  EXPECT_EQ(DecodeRepositoryModelLoad(file).status().code(), absl::StatusCode::kUnimplemented);

  inference::RepositoryModelLoadRequest typed;
  typed.set_model_name("m");
  (*typed.mutable_parameters())["config"].set_int64_param(1);
  EXPECT_EQ(DecodeRepositoryModelLoad(typed).status().code(), absl::StatusCode::kInvalidArgument);

  inference::RepositoryModelLoadRequest unknown;
  unknown.set_model_name("m");
  (*unknown.mutable_parameters())["colour"].set_string_param("red");
  absl::Status status = DecodeRepositoryModelLoad(unknown).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr("colour"));
}

TEST(GrpcAdminCodecTest, UnloadAcceptsUnloadDependentsOnlyWhenFalse) {
  inference::RepositoryModelUnloadRequest request;
  request.set_model_name("m");
  (*request.mutable_parameters())["unload_dependents"].set_bool_param(false);
  absl::StatusOr<std::string> name = DecodeRepositoryModelUnload(request);
  ASSERT_TRUE(name.ok()) << name.status();
  EXPECT_EQ(*name, "m");
  (*request.mutable_parameters())["unload_dependents"].set_bool_param(true);
  EXPECT_EQ(DecodeRepositoryModelUnload(request).status().code(), absl::StatusCode::kUnimplemented);
  (*request.mutable_parameters())["unload_dependents"].set_bool_param(false);

  (*request.mutable_parameters())["other"].set_bool_param(true);
  EXPECT_EQ(DecodeRepositoryModelUnload(request).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// Brigade serves one repository: a named one is refused by name, never read as that one.
TEST(GrpcAdminCodecTest, ANamedRepositoryIsUnimplemented) {
  EXPECT_TRUE(CheckRepositoryName("").ok());
  EXPECT_EQ(CheckRepositoryName("other").code(), absl::StatusCode::kUnimplemented);
  inference::RepositoryModelLoadRequest load;
  load.set_model_name("m");
  load.set_repository_name("other");
  const absl::Status status = DecodeRepositoryModelLoad(load).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr("repository_name 'other'"));
  inference::RepositoryModelUnloadRequest unload;
  unload.set_model_name("m");
  unload.set_repository_name("other");
  EXPECT_EQ(DecodeRepositoryModelUnload(unload).status().code(), absl::StatusCode::kUnimplemented);
}

TEST(GrpcAdminCodecTest, LogSettingsDecodeEachTypedSettingAndRefuseTheRest) {
  inference::LogSettingsRequest request;
  (*request.mutable_settings())["log_info"].set_bool_param(false);
  (*request.mutable_settings())["log_verbose_level"].set_uint32_param(2);
  (*request.mutable_settings())["log_format"].set_string_param("ISO8601");
  absl::StatusOr<protocol::LogSettingsUpdate> update = DecodeLogSettingsRequest(request);
  ASSERT_TRUE(update.ok()) << update.status();
  EXPECT_EQ(update->log_info, false);
  EXPECT_EQ(update->log_verbose_level, 2u);
  EXPECT_EQ(update->log_format, "ISO8601");
  EXPECT_FALSE(update->log_warning.has_value());

  inference::LogSettingsRequest typed;
  (*typed.mutable_settings())["log_error"].set_string_param("true");
  EXPECT_THAT(std::string(DecodeLogSettingsRequest(typed).status().message()),
              ::testing::HasSubstr("'log_error' must be a bool_param"));
  inference::LogSettingsRequest unknown;
  (*unknown.mutable_settings())["log_colour"].set_bool_param(true);
  EXPECT_EQ(DecodeLogSettingsRequest(unknown).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(GrpcAdminCodecTest, LogSettingsEncodeAllSixSettings) {
  protocol::LogSettings settings;
  settings.log_warning = false;
  settings.log_verbose_level = 1;
  inference::LogSettingsResponse response;
  EncodeLogSettings(settings, &response);
  EXPECT_EQ(response.settings_size(), 6);
  EXPECT_FALSE(response.settings().at("log_warning").bool_param());
  EXPECT_EQ(response.settings().at("log_verbose_level").uint32_param(), 1u);
  EXPECT_EQ(response.settings().at("log_format").string_param(), "default");
}

}  // namespace
}  // namespace brigade::protocol::grpc
