#ifndef BRIGADE_PROTOCOL_MODEL_CONFIG_PARSER_H_
#define BRIGADE_PROTOCOL_MODEL_CONFIG_PARSER_H_

// Reading, validating and completing a model's config.pbtxt.
//
// A Triton config.pbtxt for an ONNX or TorchScript model must load unchanged: fields Brigade's
// schema does not declare are skipped by the parser and reported, fields it declares but does not
// act on are reported by IgnoredFields(); neither fails the load. Genuine errors (syntax, bad
// values) fail with the file, line and column, or the field at fault.
//
// All functions are pure (no I/O except ReadModelConfigFile) and thread-safe.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/data_type.h"
#include "protocol/model_config.pb.h"

namespace brigade::protocol {

struct ParsedConfig {
  config::ModelConfig config;
  // Human-readable notes about unknown fields the parser skipped ("line 12: unknown field ...").
  std::vector<std::string> skipped;
};

// Parses protobuf text format. `source` names the file in messages.
absl::StatusOr<ParsedConfig> ParseModelConfigText(std::string_view text, std::string_view source);

// Parses a JSON config (the repository extension's `config` load parameter). Unknown fields are
// skipped like in text format.
absl::StatusOr<ParsedConfig> ParseModelConfigJson(std::string_view json, std::string_view source);

// Reads and parses <model_dir>/config.pbtxt. A missing file yields a config that only carries the
// name, for the backend to complete (Triton's auto-complete).
absl::StatusOr<ParsedConfig> ReadModelConfigFile(const std::string& model_dir,
                                                 std::string_view model_name);

// What one config may ask for, so that no load can exhaust the process: each instance is a thread,
// the statistics keep a row per batch size, and every warm-up run executes on every instance.
inline constexpr int kMaxConfigBatchSize = 65536;
inline constexpr int kMaxConfigInstances = 256;
inline constexpr uint32_t kMaxConfigWarmupCount = 1000;

// Checks values and fills defaults: name (must equal the directory name when set), max_batch_size
// in [0, kMaxConfigBatchSize], data types and dims of every input/output, reshape element counts
// (checked against int64 overflow), dynamic batching settings (preferred sizes within
// max_batch_size, priority levels, priority_queue_policy levels), adaptive_batching (needs
// batching, a target for P99_MODEL, a cap within max_batch_size), instance counts (none negative,
// at most kMaxConfigInstances in all), model_warmup batch sizes (within max_batch_size) and counts
// (at most kMaxConfigWarmupCount).
absl::Status ValidateModelConfig(std::string_view model_name, config::ModelConfig* config);

// A config sent with a load request (the repository API's `config` parameter) may not name files:
// default_model_filename, cc_model_filenames, an output's label_filename and a warm-up's
// input_data_file are refused (INVALID_ARGUMENT naming the field), so whoever may load models
// cannot point one at a file the repository's own config.pbtxt does not name.
absl::Status CheckOverrideNamesNoFiles(std::string_view model_name,
                                       const config::ModelConfig& config);

// Sections present in `config` that Brigade parses but does not act on, e.g.
// "sequence_batching", "optimization", "instance_group[0].kind: KIND_GPU (runs on CPU)".
std::vector<std::string> IgnoredFields(const config::ModelConfig& config);

// The config serialized as JSON with proto field names (the /config endpoint's body).
absl::StatusOr<std::string> ModelConfigToJson(const config::ModelConfig& config);

// DataType conversions between the config enum and core.
DataType FromConfigDataType(config::DataType type);
config::DataType ToConfigDataType(DataType type);

}  // namespace brigade::protocol

#endif  // BRIGADE_PROTOCOL_MODEL_CONFIG_PARSER_H_
