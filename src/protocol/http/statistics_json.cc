#include "protocol/http/statistics_json.h"

#include <string_view>

#include "core/status_macros.h"
#include "core/strings.h"
#include "protocol/http/json_dom_reader.h"
#include "protocol/http/json_writer.h"

namespace brigade::protocol::http {
namespace {

void WriteDuration(std::string_view key, const protocol::StatDuration& duration,
                   JsonWriter* writer) {
  writer->Key(key);
  writer->BeginObject();
  writer->Key("count");
  writer->Uint(duration.count);
  writer->Key("ns");
  writer->Uint(duration.ns);
  writer->EndObject();
}

}  // namespace

std::string EncodeStatistics(std::span<const protocol::ModelStatistics> models) {
  std::string json;
  JsonWriter writer(&json);
  writer.BeginObject();
  writer.Key("model_stats");
  writer.BeginArray();
  for (const protocol::ModelStatistics& model : models) {
    writer.BeginObject();
    writer.Key("name");
    writer.String(model.name);
    writer.Key("version");
    writer.String(model.version);
    writer.Key("last_inference");
    writer.Uint(model.last_inference_ms);
    writer.Key("inference_count");
    writer.Uint(model.inference_count);
    writer.Key("execution_count");
    writer.Uint(model.execution_count);

    const protocol::InferStatistics& stats = model.inference_stats;
    writer.Key("inference_stats");
    writer.BeginObject();
    WriteDuration("success", stats.success, &writer);
    WriteDuration("fail", stats.fail, &writer);
    WriteDuration("queue", stats.queue, &writer);
    WriteDuration("compute_input", stats.compute_input, &writer);
    WriteDuration("compute_infer", stats.compute_infer, &writer);
    WriteDuration("compute_output", stats.compute_output, &writer);
    WriteDuration("cache_hit", stats.cache_hit, &writer);
    WriteDuration("cache_miss", stats.cache_miss, &writer);
    writer.EndObject();

    writer.Key("response_stats");
    writer.BeginObject();
    writer.EndObject();

    writer.Key("batch_stats");
    writer.BeginArray();
    for (const protocol::BatchStatistics& batch : model.batch_stats) {
      writer.BeginObject();
      writer.Key("batch_size");
      writer.Uint(batch.batch_size);
      WriteDuration("compute_input", batch.compute_input, &writer);
      WriteDuration("compute_infer", batch.compute_infer, &writer);
      WriteDuration("compute_output", batch.compute_output, &writer);
      writer.EndObject();
    }
    writer.EndArray();

    writer.Key("memory_usage");
    writer.BeginArray();
    writer.EndArray();

    writer.Key("brigade_stage_latency");
    writer.BeginArray();
    for (const protocol::StageLatency& stage : model.stage_latency) {
      if (stage.count == 0) continue;  // no quantiles to speak of
      writer.BeginObject();
      writer.Key("stage");
      writer.String(stage.stage);
      writer.Key("count");
      writer.Uint(stage.count);
      writer.Key("p50_us");
      writer.Double(stage.p50_ns / 1e3);
      writer.Key("p90_us");
      writer.Double(stage.p90_ns / 1e3);
      writer.Key("p99_us");
      writer.Double(stage.p99_ns / 1e3);
      writer.EndObject();
    }
    writer.EndArray();
    writer.EndObject();
  }
  writer.EndArray();
  writer.EndObject();
  return json;
}

// The client's half: the statistics body read back.
namespace {

absl::StatusOr<protocol::StatDuration> ReadDuration(simdjson::dom::object object,
                                                    std::string_view key, std::string_view what) {
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

absl::StatusOr<std::vector<protocol::ModelStatistics>> DecodeModelStatistics(
    simdjson::dom::parser& parser, std::string_view json) {
  constexpr std::string_view kWhat = "statistics";
  BRIGADE_ASSIGN_OR_RETURN(simdjson::dom::object object, ParseJsonObject(parser, json, kWhat));
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

}  // namespace brigade::protocol::http
