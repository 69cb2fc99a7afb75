#include "protocol/model_config_parser.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/shape.h"
#include "core/status_macros.h"
#include "core/strings.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/json_util.h"

namespace brigade::protocol {
namespace {

namespace pb = google::protobuf;

class CollectingErrors : public pb::io::ErrorCollector {
 public:
  explicit CollectingErrors(std::string_view source) : source_(source) {}

  void AddError(int line, pb::io::ColumnNumber column, const std::string& message) override {
    if (error_.empty()) error_ = StrCat(source_, ":", line + 1, ":", column + 1, ": ", message);
  }
  void AddWarning(int line, pb::io::ColumnNumber column, const std::string& message) override {
    warnings_.push_back(StrCat(source_, ":", line + 1, ":", column + 1, ": ", message));
  }

  const std::string& error() const { return error_; }
  std::vector<std::string> TakeWarnings() { return std::move(warnings_); }

 private:
  std::string source_;
  std::string error_;
  std::vector<std::string> warnings_;
};

absl::Status CheckDims(std::string_view model, std::string_view what, std::string_view name,
                       const pb::RepeatedField<int64_t>& dims) {
  for (int64_t dim : dims) {
    if (dim < -1 || dim == 0) {
      return absl::InvalidArgumentError(StrCat("model '", model, "': ", what, " '", name,
                                               "' has invalid dims [", fmt::join(dims, ","),
                                               "] (each must be >= 1 or -1)"));
    }
  }
  return absl::OkStatus();
}

// The number of elements `dims` fix, with each -1 counted as 1; fails on int64 overflow, which a
// plain product would wrap (UB) into a count that may even match the other side.
absl::StatusOr<int64_t> FixedElementCount(std::string_view model, std::string_view what,
                                          std::string_view name, std::string_view field,
                                          const pb::RepeatedField<int64_t>& dims) {
  Shape fixed;
  for (int64_t dim : dims) fixed.push_back(dim < 0 ? 1 : dim);
  absl::StatusOr<int64_t> count = ElementCount(fixed);
  if (!count.ok()) {
    return absl::InvalidArgumentError(StrCat("model '", model, "': ", what, " '", name, "' ", field,
                                             " [", fmt::join(dims, ","),
                                             "] has more elements than an int64 counts"));
  }
  return count;
}

absl::Status CheckReshape(std::string_view model, std::string_view what, std::string_view name,
                          const pb::RepeatedField<int64_t>& dims,
                          const config::ModelTensorReshape& reshape) {
  bool variable = false;
  for (int64_t dim : dims) variable |= dim < 0;
  for (int64_t dim : reshape.shape()) {
    if (dim < -1 || dim == 0) {
      return absl::InvalidArgumentError(
          StrCat("model '", model, "': ", what, " '", name, "' has an invalid reshape dim ", dim));
    }
    variable |= dim < 0;
  }
  BRIGADE_ASSIGN_OR_RETURN(const int64_t from, FixedElementCount(model, what, name, "dims", dims));
  BRIGADE_ASSIGN_OR_RETURN(const int64_t to,
                           FixedElementCount(model, what, name, "reshape", reshape.shape()));
  if (!variable && from != to) {
    return absl::InvalidArgumentError(StrCat(
        "model '", model, "': ", what, " '", name, "' reshape [", fmt::join(reshape.shape(), ","),
        "] has ", to, " elements, dims [", fmt::join(dims, ","), "] have ", from));
  }
  return absl::OkStatus();
}

template <typename Tensors>
absl::Status CheckTensors(std::string_view model, std::string_view what, const Tensors& tensors) {
  std::set<std::string> seen;
  for (const auto& tensor : tensors) {
    if (tensor.name().empty()) {
      return absl::InvalidArgumentError(StrCat("model '", model, "': an ", what, " has no name"));
    }
    if (!seen.insert(tensor.name()).second) {
      return absl::InvalidArgumentError(
          StrCat("model '", model, "': ", what, " '", tensor.name(), "' is declared twice"));
    }
    if (tensor.data_type() == config::TYPE_INVALID) {
      return absl::InvalidArgumentError(
          StrCat("model '", model, "': ", what, " '", tensor.name(), "' needs a data_type"));
    }
    if (auto status = CheckDims(model, what, tensor.name(), tensor.dims()); !status.ok()) {
      return status;
    }
    if (tensor.has_reshape()) {
      if (auto status = CheckReshape(model, what, tensor.name(), tensor.dims(), tensor.reshape());
          !status.ok()) {
        return status;
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CheckWarmups(std::string_view model_name, const config::ModelConfig& config) {
  for (const config::ModelWarmup& warmup : config.model_warmup()) {
    if (config.max_batch_size() > 0 &&
        warmup.batch_size() > static_cast<uint32_t>(config.max_batch_size())) {
      return absl::InvalidArgumentError(
          StrCat("model '", model_name, "': warm-up '", warmup.name(), "' batch_size ",
                 warmup.batch_size(), " exceeds max_batch_size (", config.max_batch_size(), ")"));
    }
    if (warmup.count() > kMaxConfigWarmupCount) {
      return absl::InvalidArgumentError(StrCat("model '", model_name, "': warm-up '", warmup.name(),
                                               "' count ", warmup.count(), " exceeds the limit of ",
                                               kMaxConfigWarmupCount));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ParsedConfig> ParseModelConfigText(std::string_view text, std::string_view source) {
  ParsedConfig parsed;
  CollectingErrors errors(source);
  pb::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  parser.AllowUnknownField(true);
  if (!parser.ParseFromString(std::string(text), &parsed.config)) {
    return absl::InvalidArgumentError(
        errors.error().empty() ? StrCat(source, ": cannot parse model config") : errors.error());
  }
  parsed.skipped = errors.TakeWarnings();
  return parsed;
}

absl::StatusOr<ParsedConfig> ParseModelConfigJson(std::string_view json, std::string_view source) {
  ParsedConfig parsed;
  pb::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  const auto status = pb::util::JsonStringToMessage(pb::StringPiece(json.data(), json.size()),
                                                    &parsed.config, options);
  if (!status.ok()) {
    return absl::InvalidArgumentError(
        StrCat(source, ": invalid JSON model config: ", std::string(status.message())));
  }
  return parsed;
}

absl::StatusOr<ParsedConfig> ReadModelConfigFile(const std::string& model_dir,
                                                 std::string_view model_name) {
  const std::filesystem::path path = std::filesystem::path(model_dir) / "config.pbtxt";
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    ParsedConfig parsed;
    parsed.config.set_name(std::string(model_name));
    parsed.skipped.push_back(StrCat(path.string(), ": no config.pbtxt; completing from the model"));
    return parsed;
  }
  std::ostringstream text;
  text << file.rdbuf();
  return ParseModelConfigText(text.str(), path.string());
}

absl::Status ValidateModelConfig(std::string_view model_name, config::ModelConfig* config) {
  if (config->name().empty()) config->set_name(std::string(model_name));
  if (config->name() != model_name) {
    return absl::InvalidArgumentError(StrCat("model '", model_name, "': config name '",
                                             config->name(),
                                             "' does not match the model directory"));
  }
  if (config->max_batch_size() < 0) {
    return absl::InvalidArgumentError(StrCat("model '", model_name, "': max_batch_size ",
                                             config->max_batch_size(), " is negative"));
  }
  if (config->max_batch_size() > kMaxConfigBatchSize) {
    return absl::InvalidArgumentError(StrCat("model '", model_name, "': max_batch_size ",
                                             config->max_batch_size(), " exceeds the limit of ",
                                             kMaxConfigBatchSize));
  }
  if (auto status = CheckTensors(model_name, "input", config->input()); !status.ok()) return status;
  if (auto status = CheckTensors(model_name, "output", config->output()); !status.ok()) {
    return status;
  }
  // The steps themselves are checked against the models they name when the ensemble loads.
  const bool ensemble_platform = config->platform() == "ensemble";
  if (ensemble_platform != config->has_ensemble_scheduling()) {
    return absl::InvalidArgumentError(
        StrCat("model '", model_name, "': ",
               ensemble_platform ? "platform 'ensemble' needs an ensemble_scheduling section"
                                 : "ensemble_scheduling needs platform: \"ensemble\""));
  }
  const bool router_platform = config->platform() == "brigade_router";
  if (router_platform != config->has_routing()) {
    return absl::InvalidArgumentError(
        StrCat("model '", model_name, "': ",
               router_platform ? "platform 'brigade_router' needs a routing section"
                               : "routing needs platform: \"brigade_router\""));
  }
  // Attached steps: a preprocess declares the inputs clients send, a postprocess the outputs
  // they get; each needs the model's own tensors declared, which its step maps to or from.
  for (const bool pre : {true, false}) {
    const bool present = pre ? config->has_preprocess() : config->has_postprocess();
    if (!present) continue;
    const config::ModelProcessStep& step = pre ? config->preprocess() : config->postprocess();
    const std::string_view what = pre ? "preprocess" : "postprocess";
    if (ensemble_platform || router_platform || config->platform() == "brigade_process" ||
        config->backend() == "brigade_process") {
      return absl::InvalidArgumentError(
          StrCat("model '", model_name, "': ", what,
                 " attaches a step to a model that runs on a backend, not to an ensemble, a "
                 "router or a brigade_process step"));
    }
    if (!step.parameters().contains("step")) {
      return absl::InvalidArgumentError(
          StrCat("model '", model_name, "': ", what, " has no parameter \"step\""));
    }
    if ((pre ? config->input_size() : config->output_size()) == 0) {
      return absl::InvalidArgumentError(StrCat(
          "model '", model_name, "': ", what, " needs the model's ", pre ? "inputs" : "outputs",
          " declared, which its step ", pre ? "feeds" : "reads"));
    }
    if (pre ? (step.input_size() == 0 || step.output_size() > 0)
            : (step.output_size() == 0 || step.input_size() > 0)) {
      return absl::InvalidArgumentError(StrCat("model '", model_name, "': ", what, " declares the ",
                                               pre ? "inputs clients send (input), and no output"
                                                   : "outputs clients get (output), and no input"));
    }
    if (auto status = pre ? CheckTensors(model_name, "preprocess input", step.input())
                          : CheckTensors(model_name, "postprocess output", step.output());
        !status.ok()) {
      return status;
    }
  }
  if (ensemble_platform && (config->input_size() == 0 || config->output_size() == 0)) {
    return absl::InvalidArgumentError(
        StrCat("model '", model_name, "': an ensemble must declare its inputs and outputs"));
  }
  if (config->has_dynamic_batching()) {
    const auto& batching = config->dynamic_batching();
    for (int size : batching.preferred_batch_size()) {
      if (size < 1 || size > config->max_batch_size()) {
        return absl::InvalidArgumentError(StrCat("model '", model_name, "': preferred_batch_size ",
                                                 size, " must be between 1 and max_batch_size (",
                                                 config->max_batch_size(), ")"));
      }
    }
    if (batching.priority_levels() > 0 &&
        (batching.default_priority_level() < 1 ||
         batching.default_priority_level() > batching.priority_levels())) {
      return absl::InvalidArgumentError(StrCat(
          "model '", model_name, "': default_priority_level ", batching.default_priority_level(),
          " must be between 1 and priority_levels (", batching.priority_levels(), ")"));
    }
    if (batching.priority_levels() > 1024) {
      return absl::InvalidArgumentError(StrCat("model '", model_name, "': priority_levels ",
                                               batching.priority_levels(), " exceeds 1024"));
    }
    for (const auto& [level, policy] : batching.priority_queue_policy()) {
      if (level < 1 || level > batching.priority_levels()) {
        return absl::InvalidArgumentError(
            StrCat("model '", model_name, "': priority_queue_policy level ", level,
                   " must be between 1 and priority_levels (", batching.priority_levels(), ")"));
      }
    }
  }
  if (config->has_adaptive_batching()) {
    const auto& adaptive = config->adaptive_batching();
    if (config->max_batch_size() <= 0) {
      return absl::InvalidArgumentError(
          StrCat("model '", model_name, "': adaptive_batching needs max_batch_size > 0"));
    }
    if (config->has_sequence_batching() || config->has_ensemble_scheduling()) {
      return absl::InvalidArgumentError(StrCat(
          "model '", model_name,
          "': adaptive_batching cannot be combined with sequence_batching or ensemble_scheduling"));
    }
    if (adaptive.policy() == config::ModelAdaptiveBatching::P99_MODEL &&
        adaptive.target_p99_microseconds() == 0) {
      return absl::InvalidArgumentError(
          StrCat("model '", model_name,
                 "': adaptive_batching policy P99_MODEL needs target_p99_microseconds > 0"));
    }
    if (adaptive.max_batch_size() < 0 || adaptive.max_batch_size() > config->max_batch_size()) {
      return absl::InvalidArgumentError(StrCat(
          "model '", model_name, "': adaptive_batching.max_batch_size ", adaptive.max_batch_size(),
          " must be between 0 and max_batch_size (", config->max_batch_size(), ")"));
    }
  }
  // Summed as the scheduler sums them (a group without a count is one instance), in 64 bits so
  // many large groups cannot wrap an int.
  int64_t instances = 0;
  for (const auto& group : config->instance_group()) {
    instances += group.count() > 0 ? group.count() : 1;
    if (instances > kMaxConfigInstances) {
      return absl::InvalidArgumentError(StrCat("model '", model_name,
                                               "': the instance_group counts add up to more than ",
                                               kMaxConfigInstances, " instances, the limit"));
    }
    if (group.count() < 0) {
      return absl::InvalidArgumentError(StrCat("model '", model_name, "': instance_group '",
                                               group.name(), "' has a negative count"));
    }
    if (group.intra_op_threads() < 0) {
      return absl::InvalidArgumentError(StrCat("model '", model_name, "': instance_group '",
                                               group.name(), "' has negative intra_op_threads"));
    }
  }
  return CheckWarmups(model_name, *config);
}

absl::Status CheckOverrideNamesNoFiles(std::string_view model_name,
                                       const config::ModelConfig& config) {
  auto refuse = [&](std::string_view field) {
    return absl::InvalidArgumentError(
        StrCat("model '", model_name, "': a config sent with a load request may not name files (",
               field, "); put it in the repository's config.pbtxt"));
  };
  if (!config.default_model_filename().empty()) return refuse("default_model_filename");
  if (!config.cc_model_filenames().empty()) return refuse("cc_model_filenames");
  for (const config::ModelOutput& output : config.output()) {
    if (!output.label_filename().empty()) {
      return refuse(StrCat("output '", output.name(), "' label_filename"));
    }
  }
  for (const config::ModelWarmup& warmup : config.model_warmup()) {
    for (const auto& [input, data] : warmup.inputs()) {
      if (data.input_data_type_case() == config::ModelWarmup::Input::kInputDataFile) {
        return refuse(StrCat("warm-up '", warmup.name(), "' input '", input, "' input_data_file"));
      }
    }
  }
  return absl::OkStatus();
}

std::vector<std::string> IgnoredFields(const config::ModelConfig& config) {
  std::vector<std::string> ignored;
  if (config.has_sequence_batching()) ignored.emplace_back("sequence_batching");
  if (config.has_optimization()) ignored.emplace_back("optimization");
  if (config.batch_input_size() > 0) ignored.emplace_back("batch_input");
  if (config.batch_output_size() > 0) ignored.emplace_back("batch_output");
  if (config.has_model_operations()) ignored.emplace_back("model_operations");
  if (config.model_transaction_policy().decoupled()) {
    ignored.emplace_back("model_transaction_policy.decoupled");
  }
  if (config.has_model_repository_agents()) ignored.emplace_back("model_repository_agents");
  if (config.has_model_metrics()) ignored.emplace_back("model_metrics");
  if (!config.cc_model_filenames().empty()) ignored.emplace_back("cc_model_filenames");
  if (!config.runtime().empty()) ignored.emplace_back("runtime");
  if (config.max_batch_size() == 0 && config.has_dynamic_batching()) {
    // Queue policies, priorities and ordering still apply; only the batch forming does not.
    const auto& batching = config.dynamic_batching();
    if (batching.preferred_batch_size_size() > 0 || batching.max_queue_delay_microseconds() > 0) {
      ignored.emplace_back(
          "dynamic_batching.preferred_batch_size/max_queue_delay_microseconds (max_batch_size is "
          "0)");
    }
  }
  if (config.has_dynamic_batching() && config.has_adaptive_batching()) {
    const auto& batching = config.dynamic_batching();
    if (batching.preferred_batch_size_size() > 0 || batching.max_queue_delay_microseconds() > 0) {
      ignored.emplace_back(
          "dynamic_batching.preferred_batch_size/max_queue_delay_microseconds (adaptive_batching "
          "decides sizes and waits)");
    }
  }
  for (int i = 0; i < config.instance_group_size(); ++i) {
    const auto& group = config.instance_group(i);
    const std::string where = StrCat("instance_group[", i, "]");
    if (group.kind() == config::ModelInstanceGroup::KIND_GPU || group.gpus_size() > 0) {
      ignored.emplace_back(StrCat(where, ".kind KIND_GPU/gpus (instances run on CPU)"));
    }
    if (group.kind() == config::ModelInstanceGroup::KIND_MODEL) {
      ignored.emplace_back(StrCat(where, ".kind KIND_MODEL (instances run on CPU)"));
    }
    if (group.has_rate_limiter()) ignored.emplace_back(StrCat(where, ".rate_limiter"));
    if (group.profile_size() > 0) ignored.emplace_back(StrCat(where, ".profile"));
    if (group.passive()) ignored.emplace_back(StrCat(where, ".passive"));
    if (!group.host_policy().empty()) ignored.emplace_back(StrCat(where, ".host_policy"));
  }
  for (const auto& input : config.input()) {
    if (input.is_shape_tensor()) {
      ignored.emplace_back(StrCat("input '", input.name(), "'.is_shape_tensor"));
    }
    if (input.allow_ragged_batch()) {
      ignored.emplace_back(StrCat("input '", input.name(), "'.allow_ragged_batch"));
    }
  }
  return ignored;
}

absl::StatusOr<std::string> ModelConfigToJson(const config::ModelConfig& config) {
  std::string json;
  pb::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  const auto status = pb::util::MessageToJsonString(config, &json, options);
  if (!status.ok()) {
    return absl::InternalError(StrCat("cannot write model config '", config.name(),
                                      "' as JSON: ", std::string(status.message())));
  }
  return json;
}

DataType FromConfigDataType(config::DataType type) {
  switch (type) {
    case config::TYPE_BOOL:
      return DataType::kBool;
    case config::TYPE_UINT8:
      return DataType::kUint8;
    case config::TYPE_UINT16:
      return DataType::kUint16;
    case config::TYPE_UINT32:
      return DataType::kUint32;
    case config::TYPE_UINT64:
      return DataType::kUint64;
    case config::TYPE_INT8:
      return DataType::kInt8;
    case config::TYPE_INT16:
      return DataType::kInt16;
    case config::TYPE_INT32:
      return DataType::kInt32;
    case config::TYPE_INT64:
      return DataType::kInt64;
    case config::TYPE_FP16:
      return DataType::kFp16;
    case config::TYPE_BF16:
      return DataType::kBf16;
    case config::TYPE_FP32:
      return DataType::kFp32;
    case config::TYPE_FP64:
      return DataType::kFp64;
    case config::TYPE_STRING:
      return DataType::kBytes;
    default:
      return DataType::kInvalid;
  }
}

config::DataType ToConfigDataType(DataType type) {
  for (int i = config::DataType_MIN; i <= config::DataType_MAX; ++i) {
    if (config::DataType_IsValid(i) &&
        FromConfigDataType(static_cast<config::DataType>(i)) == type) {
      return static_cast<config::DataType>(i);
    }
  }
  return config::TYPE_INVALID;
}

}  // namespace brigade::protocol
