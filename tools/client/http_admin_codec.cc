#include "tools/client/http_admin_codec.h"

#include "tools/client/json_decode.h"
#include "tools/client/json_text.h"
#include "core/status_macros.h"
#include "core/strings.h"

namespace brigade::client {
namespace {

absl::StatusOr<simdjson::dom::object> RootObject(simdjson::dom::parser& parser,
                                                 std::string_view json, std::string_view what) {
  BRIGADE_ASSIGN_OR_RETURN(simdjson::dom::element root, ParseJson(parser, json, what));
  simdjson::dom::object object;
  if (root.get(object) != simdjson::SUCCESS) {
    return MalformedResponse(what, "the body is not a JSON object");
  }
  return object;
}

absl::Status ReadStringArray(simdjson::dom::object object, std::string_view key,
                             std::string_view what, std::vector<std::string>* out) {
  simdjson::dom::element value;
  if (object[key].get(value) != simdjson::SUCCESS) return absl::OkStatus();
  simdjson::dom::array items;
  if (value.get(items) != simdjson::SUCCESS) {
    return MalformedResponse(what, StrCat("'", key, "' is not an array"));
  }
  for (simdjson::dom::element item : items) {
    std::string_view text;
    if (item.get(text) != simdjson::SUCCESS) {
      return MalformedResponse(what, StrCat("'", key, "' holds a non-string"));
    }
    out->emplace_back(text);
  }
  return absl::OkStatus();
}

absl::Status ReadTensorMetadata(simdjson::dom::object object, std::string_view key,
                                std::string_view what, std::vector<protocol::TensorMetadata>* out) {
  simdjson::dom::element value;
  if (object[key].get(value) != simdjson::SUCCESS) return absl::OkStatus();
  simdjson::dom::array items;
  if (value.get(items) != simdjson::SUCCESS) {
    return MalformedResponse(what, StrCat("'", key, "' is not an array"));
  }
  for (simdjson::dom::element item : items) {
    simdjson::dom::object tensor;
    if (item.get(tensor) != simdjson::SUCCESS) {
      return MalformedResponse(what, StrCat("an entry of '", key, "' is not an object"));
    }
    protocol::TensorMetadata& metadata = out->emplace_back();
    BRIGADE_ASSIGN_OR_RETURN(std::string_view name, RequiredString(tensor, "name", what));
    metadata.name.assign(name);
    BRIGADE_ASSIGN_OR_RETURN(std::string_view datatype, RequiredString(tensor, "datatype", what));
    metadata.datatype.assign(datatype);
    metadata.dtype = ParseDataType(datatype).value_or(DataType::kInvalid);
    simdjson::dom::element shape;
    if (tensor["shape"].get(shape) != simdjson::SUCCESS) {
      return MalformedResponse(what, StrCat("tensor '", name, "' has no shape"));
    }
    BRIGADE_ASSIGN_OR_RETURN(metadata.shape, ReadShape(shape, what));
  }
  return absl::OkStatus();
}

absl::StatusOr<protocol::StatDuration> ReadDuration(simdjson::dom::object object, std::string_view key,
                                          std::string_view what) {
  protocol::StatDuration duration;
  simdjson::dom::element value;
  if (object[key].get(value) != simdjson::SUCCESS) return duration;
  simdjson::dom::object fields;
  if (value.get(fields) != simdjson::SUCCESS) {
    return MalformedResponse(what, StrCat("'", key, "' is not an object"));
  }
  BRIGADE_ASSIGN_OR_RETURN(duration.count, OptionalUint(fields, "count", what));
  BRIGADE_ASSIGN_OR_RETURN(duration.ns, OptionalUint(fields, "ns", what));
  return duration;
}

absl::StatusOr<protocol::ModelStatistics> ReadModelStatistics(simdjson::dom::object object,
                                                    std::string_view what) {
  protocol::ModelStatistics stats;
  BRIGADE_ASSIGN_OR_RETURN(std::string_view name, RequiredString(object, "name", what));
  stats.name.assign(name);
  BRIGADE_ASSIGN_OR_RETURN(std::string_view version, OptionalString(object, "version", what));
  stats.version.assign(version);
  BRIGADE_ASSIGN_OR_RETURN(stats.last_inference_ms, OptionalUint(object, "last_inference", what));
  BRIGADE_ASSIGN_OR_RETURN(stats.inference_count, OptionalUint(object, "inference_count", what));
  BRIGADE_ASSIGN_OR_RETURN(stats.execution_count, OptionalUint(object, "execution_count", what));

  simdjson::dom::element value;
  if (object["inference_stats"].get(value) == simdjson::SUCCESS) {
    simdjson::dom::object fields;
    if (value.get(fields) != simdjson::SUCCESS) {
      return MalformedResponse(what, "'inference_stats' is not an object");
    }
    protocol::InferStatistics& s = stats.inference_stats;
    BRIGADE_ASSIGN_OR_RETURN(s.success, ReadDuration(fields, "success", what));
    BRIGADE_ASSIGN_OR_RETURN(s.fail, ReadDuration(fields, "fail", what));
    BRIGADE_ASSIGN_OR_RETURN(s.queue, ReadDuration(fields, "queue", what));
    BRIGADE_ASSIGN_OR_RETURN(s.compute_input, ReadDuration(fields, "compute_input", what));
    BRIGADE_ASSIGN_OR_RETURN(s.compute_infer, ReadDuration(fields, "compute_infer", what));
    BRIGADE_ASSIGN_OR_RETURN(s.compute_output, ReadDuration(fields, "compute_output", what));
    BRIGADE_ASSIGN_OR_RETURN(s.cache_hit, ReadDuration(fields, "cache_hit", what));
    BRIGADE_ASSIGN_OR_RETURN(s.cache_miss, ReadDuration(fields, "cache_miss", what));
  }
  if (object["batch_stats"].get(value) == simdjson::SUCCESS) {
    simdjson::dom::array batches;
    if (value.get(batches) != simdjson::SUCCESS) {
      return MalformedResponse(what, "'batch_stats' is not an array");
    }
    for (simdjson::dom::element item : batches) {
      simdjson::dom::object fields;
      if (item.get(fields) != simdjson::SUCCESS) {
        return MalformedResponse(what, "an entry of 'batch_stats' is not an object");
      }
      protocol::BatchStatistics& batch = stats.batch_stats.emplace_back();
      BRIGADE_ASSIGN_OR_RETURN(batch.batch_size, OptionalUint(fields, "batch_size", what));
      BRIGADE_ASSIGN_OR_RETURN(batch.compute_input, ReadDuration(fields, "compute_input", what));
      BRIGADE_ASSIGN_OR_RETURN(batch.compute_infer, ReadDuration(fields, "compute_infer", what));
      BRIGADE_ASSIGN_OR_RETURN(batch.compute_output, ReadDuration(fields, "compute_output", what));
    }
  }
  return stats;
}

}  // namespace

absl::StatusOr<protocol::ServerMetadata> DecodeServerMetadata(simdjson::dom::parser& parser,
                                                    std::string_view json) {
  constexpr std::string_view kWhat = "server metadata";
  BRIGADE_ASSIGN_OR_RETURN(simdjson::dom::object object, RootObject(parser, json, kWhat));
  protocol::ServerMetadata metadata;
  BRIGADE_ASSIGN_OR_RETURN(std::string_view name, OptionalString(object, "name", kWhat));
  metadata.name.assign(name);
  BRIGADE_ASSIGN_OR_RETURN(std::string_view version, OptionalString(object, "version", kWhat));
  metadata.version.assign(version);
  BRIGADE_RETURN_IF_ERROR(ReadStringArray(object, "extensions", kWhat, &metadata.extensions));
  return metadata;
}

absl::StatusOr<protocol::ModelMetadata> DecodeModelMetadata(simdjson::dom::parser& parser,
                                                  std::string_view json) {
  constexpr std::string_view kWhat = "model metadata";
  BRIGADE_ASSIGN_OR_RETURN(simdjson::dom::object object, RootObject(parser, json, kWhat));
  protocol::ModelMetadata metadata;
  BRIGADE_ASSIGN_OR_RETURN(std::string_view name, RequiredString(object, "name", kWhat));
  metadata.name.assign(name);
  BRIGADE_ASSIGN_OR_RETURN(std::string_view platform, OptionalString(object, "platform", kWhat));
  metadata.platform.assign(platform);
  BRIGADE_RETURN_IF_ERROR(ReadStringArray(object, "versions", kWhat, &metadata.versions));
  BRIGADE_RETURN_IF_ERROR(ReadTensorMetadata(object, "inputs", kWhat, &metadata.inputs));
  BRIGADE_RETURN_IF_ERROR(ReadTensorMetadata(object, "outputs", kWhat, &metadata.outputs));
  return metadata;
}

absl::StatusOr<std::vector<protocol::ModelStatistics>> DecodeModelStatistics(simdjson::dom::parser& parser,
                                                                   std::string_view json) {
  constexpr std::string_view kWhat = "statistics";
  BRIGADE_ASSIGN_OR_RETURN(simdjson::dom::object object, RootObject(parser, json, kWhat));
  simdjson::dom::array models;
  if (object["model_stats"].get(models) != simdjson::SUCCESS) {
    return MalformedResponse(kWhat, "'model_stats' is missing or not an array");
  }
  std::vector<protocol::ModelStatistics> result;
  for (simdjson::dom::element item : models) {
    simdjson::dom::object model;
    if (item.get(model) != simdjson::SUCCESS) {
      return MalformedResponse(kWhat, "an entry of 'model_stats' is not an object");
    }
    BRIGADE_ASSIGN_OR_RETURN(protocol::ModelStatistics stats, ReadModelStatistics(model, kWhat));
    result.push_back(std::move(stats));
  }
  return result;
}

absl::StatusOr<std::vector<protocol::RepositoryIndexEntry>> DecodeRepositoryIndex(simdjson::dom::parser& parser,
                                                                   std::string_view json) {
  constexpr std::string_view kWhat = "repository index";
  BRIGADE_ASSIGN_OR_RETURN(simdjson::dom::element root, ParseJson(parser, json, kWhat));
  simdjson::dom::array items;
  if (root.get(items) != simdjson::SUCCESS) {
    return MalformedResponse(kWhat, "the body is not a JSON array");
  }
  std::vector<protocol::RepositoryIndexEntry> result;
  for (simdjson::dom::element item : items) {
    simdjson::dom::object entry;
    if (item.get(entry) != simdjson::SUCCESS) {
      return MalformedResponse(kWhat, "an entry is not an object");
    }
    protocol::RepositoryIndexEntry& model = result.emplace_back();
    BRIGADE_ASSIGN_OR_RETURN(std::string_view name, RequiredString(entry, "name", kWhat));
    model.name.assign(name);
    BRIGADE_ASSIGN_OR_RETURN(std::string_view version, OptionalString(entry, "version", kWhat));
    model.version.assign(version);
    BRIGADE_ASSIGN_OR_RETURN(std::string_view state, OptionalString(entry, "state", kWhat));
    model.state.assign(state);
    BRIGADE_ASSIGN_OR_RETURN(std::string_view reason, OptionalString(entry, "reason", kWhat));
    model.reason.assign(reason);
  }
  return result;
}

std::string ErrorMessageFromBody(simdjson::dom::parser& parser, std::string_view body,
                                 std::string_view fallback) {
  simdjson::dom::element root;
  std::string_view message;
  if (parser.parse(body.data(), body.size(), /*realloc_if_needed=*/false).get(root) ==
          simdjson::SUCCESS &&
      root["error"].get(message) == simdjson::SUCCESS) {
    return std::string(message);
  }
  while (!body.empty() && (body.back() == '\n' || body.back() == '\r' || body.back() == ' ')) {
    body.remove_suffix(1);
  }
  if (body.empty()) return std::string(fallback);
  constexpr size_t kMaxBytes = 512;
  return std::string(body.substr(0, kMaxBytes));
}

std::string EncodeRepositoryIndexRequest(bool ready_only) {
  return ready_only ? "{\"ready\":true}" : "{}";
}

std::string EncodeLoadRequest(std::string_view config_json) {
  if (config_json.empty()) return "{}";
  std::string json = "{\"parameters\":{\"config\":";
  AppendJsonString(config_json, &json);
  json.append("}}");
  return json;
}

}  // namespace brigade::client
