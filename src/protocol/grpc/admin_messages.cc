#include "protocol/grpc/admin_messages.h"

#include "core/status_macros.h"
#include "core/strings.h"

namespace brigade::protocol::grpc {
namespace {

using inference::ModelRepositoryParameter;

void EncodeTensorMetadata(const protocol::TensorMetadata& tensor,
                          inference::ModelMetadataResponse::TensorMetadata* out) {
  out->set_name(tensor.name);
  const std::string_view type = DataTypeName(tensor.dtype);
  out->set_datatype(type.data(), type.size());
  out->mutable_shape()->Add(tensor.shape.begin(), tensor.shape.end());
}

void EncodeDuration(const protocol::StatDuration& duration, inference::StatisticDuration* out) {
  out->set_count(duration.count);
  out->set_ns(duration.ns);
}

}  // namespace

void EncodeServerMetadata(const protocol::ServerMetadata& metadata,
                          inference::ServerMetadataResponse* out) {
  out->set_name(metadata.name);
  out->set_version(metadata.version);
  for (const std::string& extension : metadata.extensions) out->add_extensions(extension);
}

void EncodeModelMetadata(const protocol::ModelMetadata& metadata,
                         inference::ModelMetadataResponse* out) {
  out->set_name(metadata.name);
  for (const std::string& version : metadata.versions) out->add_versions(version);
  out->set_platform(metadata.platform);
  for (const protocol::TensorMetadata& input : metadata.inputs) {
    EncodeTensorMetadata(input, out->add_inputs());
  }
  for (const protocol::TensorMetadata& output : metadata.outputs) {
    EncodeTensorMetadata(output, out->add_outputs());
  }
}

void EncodeRepositoryIndex(std::span<const protocol::RepositoryIndexEntry> entries,
                           inference::RepositoryIndexResponse* out) {
  for (const protocol::RepositoryIndexEntry& entry : entries) {
    inference::RepositoryIndexResponse::ModelIndex* model = out->add_models();
    model->set_name(entry.name);
    model->set_version(entry.version);
    model->set_state(entry.state);
    model->set_reason(entry.reason);
  }
}

void EncodeModelStatistics(std::span<const protocol::ModelStatistics> snapshots,
                           inference::ModelStatisticsResponse* out) {
  for (const protocol::ModelStatistics& snapshot : snapshots) {
    inference::ModelStatistics* model = out->add_model_stats();
    model->set_name(snapshot.name);
    model->set_version(snapshot.version);
    model->set_last_inference(snapshot.last_inference_ms);
    model->set_inference_count(snapshot.inference_count);
    model->set_execution_count(snapshot.execution_count);
    const protocol::InferStatistics& in = snapshot.inference_stats;
    inference::InferStatistics* stats = model->mutable_inference_stats();
    EncodeDuration(in.success, stats->mutable_success());
    EncodeDuration(in.fail, stats->mutable_fail());
    EncodeDuration(in.queue, stats->mutable_queue());
    EncodeDuration(in.compute_input, stats->mutable_compute_input());
    EncodeDuration(in.compute_infer, stats->mutable_compute_infer());
    EncodeDuration(in.compute_output, stats->mutable_compute_output());
    EncodeDuration(in.cache_hit, stats->mutable_cache_hit());
    EncodeDuration(in.cache_miss, stats->mutable_cache_miss());
    for (const protocol::BatchStatistics& batch : snapshot.batch_stats) {
      inference::InferBatchStatistics* encoded = model->add_batch_stats();
      encoded->set_batch_size(batch.batch_size);
      EncodeDuration(batch.compute_input, encoded->mutable_compute_input());
      EncodeDuration(batch.compute_infer, encoded->mutable_compute_infer());
      EncodeDuration(batch.compute_output, encoded->mutable_compute_output());
    }
    for (const protocol::StageLatency& stage : snapshot.stage_latency) {
      if (stage.count == 0) continue;
      inference::StageLatency* encoded = model->add_brigade_stage_latency();
      encoded->set_stage(stage.stage);
      encoded->set_count(stage.count);
      encoded->set_p50_us(stage.p50_ns / 1e3);
      encoded->set_p90_us(stage.p90_ns / 1e3);
      encoded->set_p99_us(stage.p99_ns / 1e3);
    }
  }
}

absl::Status CheckRepositoryName(std::string_view repository_name) {
  if (repository_name.empty()) return absl::OkStatus();
  return absl::UnimplementedError(
      StrCat("repository_name '", repository_name,
             "': Brigade serves one model repository; leave repository_name empty"));
}

absl::StatusOr<protocol::LoadModelRequest> DecodeRepositoryModelLoad(
    const inference::RepositoryModelLoadRequest& request) {
  BRIGADE_RETURN_IF_ERROR(CheckRepositoryName(request.repository_name()));
  if (request.model_name().empty()) return absl::InvalidArgumentError("model_name is empty");
  protocol::LoadModelRequest out;
  out.name = request.model_name();
  for (const auto& [key, value] : request.parameters()) {
    if (key == "config") {
      if (value.parameter_choice_case() != ModelRepositoryParameter::kStringParam) {
        return absl::InvalidArgumentError(
            "load parameter 'config' must be a string (the model configuration as JSON)");
      }
      out.config_json = value.string_param();
    } else if (key.rfind("file:", 0) == 0) {
      return absl::UnimplementedError(StrCat("load parameter '", key,
                                             "': loading model files through the API is not "
                                             "supported"));
    } else {
      return absl::InvalidArgumentError(StrCat("unknown load parameter '", key, "'"));
    }
  }
  return out;
}

absl::StatusOr<std::string> DecodeRepositoryModelUnload(
    const inference::RepositoryModelUnloadRequest& request) {
  BRIGADE_RETURN_IF_ERROR(CheckRepositoryName(request.repository_name()));
  if (request.model_name().empty()) return absl::InvalidArgumentError("model_name is empty");
  for (const auto& [key, value] : request.parameters()) {
    if (key != "unload_dependents") {
      return absl::InvalidArgumentError(StrCat("unknown unload parameter '", key, "'"));
    }
    if (value.parameter_choice_case() != ModelRepositoryParameter::kBoolParam) {
      return absl::InvalidArgumentError("unload parameter 'unload_dependents' must be a bool");
    }
    // Brigade unloads exactly the model named: with `true`, the models an ensemble brought in
    // would stay loaded, so the request is refused rather than half done.
    if (value.bool_param()) {
      return absl::UnimplementedError(
          "unload parameter 'unload_dependents': unloading the models an ensemble uses along "
          "with it is not supported; unload each model by name");
    }
  }
  return request.model_name();
}

absl::StatusOr<protocol::LogSettingsUpdate> DecodeLogSettingsRequest(
    const inference::LogSettingsRequest& request) {
  using Value = inference::LogSettingsRequest::SettingValue;
  protocol::LogSettingsUpdate update;
  for (const auto& setting : request.settings()) {
    // Named, not structured bindings: clang 14 (the thread-safety check) cannot capture those.
    const std::string& key = setting.first;
    const Value& value = setting.second;
    const auto expect = [&](Value::ParameterChoiceCase type,
                            std::string_view type_name) -> absl::Status {
      if (value.parameter_choice_case() == type) return absl::OkStatus();
      return absl::InvalidArgumentError(
          StrCat("log setting '", key, "' must be a ", type_name, "_param"));
    };
    if (key == "log_file" || key == "log_format") {
      BRIGADE_RETURN_IF_ERROR(expect(Value::kStringParam, "string"));
      (key == "log_file" ? update.log_file : update.log_format) = value.string_param();
    } else if (key == "log_info" || key == "log_warning" || key == "log_error") {
      BRIGADE_RETURN_IF_ERROR(expect(Value::kBoolParam, "bool"));
      (key == "log_info"      ? update.log_info
       : key == "log_warning" ? update.log_warning
                              : update.log_error) = value.bool_param();
    } else if (key == "log_verbose_level") {
      BRIGADE_RETURN_IF_ERROR(expect(Value::kUint32Param, "uint32"));
      update.log_verbose_level = value.uint32_param();
    } else {
      return absl::InvalidArgumentError(StrCat("unknown log setting '", key, "'"));
    }
  }
  return update;
}

void EncodeLogSettings(const protocol::LogSettings& settings, inference::LogSettingsResponse* out) {
  auto& map = *out->mutable_settings();
  map["log_file"].set_string_param(settings.log_file);
  map["log_info"].set_bool_param(settings.log_info);
  map["log_warning"].set_bool_param(settings.log_warning);
  map["log_error"].set_bool_param(settings.log_error);
  map["log_verbose_level"].set_uint32_param(settings.log_verbose_level);
  map["log_format"].set_string_param(settings.log_format);
}

// The client's half: the response messages read back.

protocol::ServerMetadata DecodeServerMetadata(const inference::ServerMetadataResponse& message) {
  protocol::ServerMetadata metadata;
  metadata.name = message.name();
  metadata.version = message.version();
  metadata.extensions.assign(message.extensions().begin(), message.extensions().end());
  return metadata;
}

protocol::ModelMetadata DecodeModelMetadata(const inference::ModelMetadataResponse& message) {
  protocol::ModelMetadata metadata;
  metadata.name = message.name();
  metadata.platform = message.platform();
  metadata.versions.assign(message.versions().begin(), message.versions().end());
  auto convert = [](const auto& tensors, std::vector<protocol::TensorMetadata>* out) {
    for (const auto& tensor : tensors) {
      protocol::TensorMetadata& converted = out->emplace_back();
      converted.name = tensor.name();
      converted.datatype = tensor.datatype();
      converted.dtype = ParseDataType(tensor.datatype()).value_or(DataType::kInvalid);
      converted.shape.assign(tensor.shape().begin(), tensor.shape().end());
    }
  };
  convert(message.inputs(), &metadata.inputs);
  convert(message.outputs(), &metadata.outputs);
  return metadata;
}

std::vector<protocol::ModelStatistics> DecodeModelStatistics(
    const inference::ModelStatisticsResponse& message) {
  auto duration = [](const inference::StatisticDuration& d) {
    return protocol::StatDuration{.count = d.count(), .ns = d.ns()};
  };
  std::vector<protocol::ModelStatistics> result;
  for (const inference::ModelStatistics& model : message.model_stats()) {
    protocol::ModelStatistics& stats = result.emplace_back();
    stats.name = model.name();
    stats.version = model.version();
    stats.last_inference_ms = model.last_inference();
    stats.inference_count = model.inference_count();
    stats.execution_count = model.execution_count();
    const inference::InferStatistics& s = model.inference_stats();
    stats.inference_stats =
        protocol::InferStatistics{.success = duration(s.success()),
                                  .fail = duration(s.fail()),
                                  .queue = duration(s.queue()),
                                  .compute_input = duration(s.compute_input()),
                                  .compute_infer = duration(s.compute_infer()),
                                  .compute_output = duration(s.compute_output()),
                                  .cache_hit = duration(s.cache_hit()),
                                  .cache_miss = duration(s.cache_miss())};
    for (const inference::InferBatchStatistics& batch : model.batch_stats()) {
      stats.batch_stats.push_back(
          protocol::BatchStatistics{.batch_size = batch.batch_size(),
                                    .compute_input = duration(batch.compute_input()),
                                    .compute_infer = duration(batch.compute_infer()),
                                    .compute_output = duration(batch.compute_output())});
    }
  }
  return result;
}

std::vector<protocol::RepositoryIndexEntry> DecodeRepositoryIndex(
    const inference::RepositoryIndexResponse& message) {
  std::vector<protocol::RepositoryIndexEntry> result;
  for (const inference::RepositoryIndexResponse::ModelIndex& model : message.models()) {
    result.push_back(protocol::RepositoryIndexEntry{.name = model.name(),
                                                    .version = model.version(),
                                                    .state = model.state(),
                                                    .reason = model.reason()});
  }
  return result;
}

}  // namespace brigade::protocol::grpc
