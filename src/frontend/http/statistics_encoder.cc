#include "frontend/http/statistics_encoder.h"

#include <string_view>

#include "frontend/http/json_writer.h"

namespace brigade::frontend {
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

}  // namespace brigade::frontend
