#include "tools/analyze/analysis_json.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/json_text.h"
#include "core/strings.h"
#include "tools/analyze/summary_text.h"

namespace brigade::analyze {
namespace {

// Places the commas: each value or key after the first in its container is preceded by one.
class JsonWriter {
 public:
  void BeginObject() { Open('{'); }
  void EndObject() { Close('}'); }
  void BeginArray() { Open('['); }
  void EndArray() { Close(']'); }
  void Key(std::string_view key) {
    Separate();
    AppendJsonString(key, &out_);
    out_ += ':';
    after_key_ = true;
  }
  void String(std::string_view value) {
    Separate();
    AppendJsonString(value, &out_);
  }
  // null for NaN and infinities.
  void Number(double value) {
    Separate();
    if (std::isfinite(value)) {
      AppendJsonDouble(value, &out_);
    } else {
      out_ += "null";
    }
  }
  void Int(int64_t value) {
    Separate();
    AppendJsonInt(value, &out_);
  }
  void Bool(bool value) {
    Separate();
    out_ += value ? "true" : "false";
  }
  void Null() {
    Separate();
    out_ += "null";
  }

  template <typename T>
  void Field(std::string_view key, const T& value) {
    Key(key);
    if constexpr (std::is_same_v<T, bool>) {
      Bool(value);
    } else if constexpr (std::is_floating_point_v<T>) {
      Number(value);
    } else if constexpr (std::is_integral_v<T>) {
      Int(static_cast<int64_t>(value));
    } else {
      String(value);
    }
  }

  std::string Take() { return std::move(out_); }

 private:
  void Separate() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (!first_.empty()) {
      if (!first_.back()) out_ += ',';
      first_.back() = false;
    }
  }
  void Open(char bracket) {
    Separate();
    out_ += bracket;
    first_.push_back(true);
  }
  void Close(char bracket) {
    out_ += bracket;
    first_.pop_back();
  }

  std::string out_;
  std::vector<bool> first_;
  bool after_key_ = false;
};

void WriteSettings(const AnalysisSettings& settings, JsonWriter& json) {
  json.Key("settings");
  json.BeginObject();
  json.Field("metric", settings.metric);
  json.Field("reference", settings.reference);
  json.Key("eval");
  json.BeginObject();
  json.Field("description", settings.eval_description);
  json.Field("examples", settings.eval_examples);
  json.EndObject();
  json.Key("load");
  json.BeginObject();
  json.Field("description", settings.load_description);
  json.Field("rows_per_request", settings.rows_per_request);
  json.Field("warmup_s", settings.warmup_s);
  json.Field("duration_s", settings.duration_s);
  json.EndObject();
  json.Field("cores", settings.cores);
  json.Field("load_average_start", settings.load_average_start);
  json.Field("other_cores_busy", settings.other_cores_busy);
  json.Key("slo");
  json.BeginObject();
  json.Field("max_p99_ms", settings.slo.max_p99_ms);
  json.Field("max_accuracy_drop", settings.slo.max_accuracy_drop);
  json.Field("min_throughput_per_s", settings.slo.min_throughput_per_s);
  json.Field("baseline_accuracy", settings.slo.baseline_accuracy);
  json.Field("text", SloText(settings.slo));
  json.EndObject();
  json.Field("goal", GoalName(settings.goal));
  json.EndObject();
}

void WriteVariants(const Analysis& analysis, JsonWriter& json) {
  json.Key("variants");
  json.BeginArray();
  for (const VariantResult& variant : analysis.variants) {
    json.BeginObject();
    json.Field("name", variant.name);
    json.Field("model_dir", variant.model_dir);
    json.Field("platform", variant.platform);
    json.Field("base_max_batch_size", variant.base_max_batch_size);
    json.Field("accuracy", variant.accuracy);
    json.Field("examples", variant.examples);
    json.Field("correct", variant.correct);
    json.Field("eval_seconds", variant.eval_seconds);
    json.Field("error", variant.error);
    json.EndObject();
  }
  json.EndArray();
}

void WriteConfigs(const Analysis& analysis, JsonWriter& json) {
  json.Key("configs");
  json.BeginArray();
  for (size_t i = 0; i < analysis.configs.size(); ++i) {
    const ConfigResult& config = analysis.configs[i];
    json.BeginObject();
    json.Field("id", i);
    json.Field("variant", config.variant);
    json.Field("label", config.config.Label());
    json.Field("max_batch_size", config.config.max_batch_size);
    json.Field("batching", config.config.policy.Label());
    json.Field("instances", config.config.instances);
    json.Field("threads", config.config.threads);
    json.Field("effective_threads", config.config.effective_threads);
    json.Field("server_start_s", config.server_start_s);
    json.Field("error", config.error);
    json.Field("config_pbtxt", config.config_text);
    json.EndObject();
  }
  json.EndArray();
  json.Key("skipped");
  json.BeginArray();
  for (const SkippedConfig& skipped : analysis.skipped) {
    json.BeginObject();
    json.Field("variant", skipped.config.variant < static_cast<int>(analysis.variants.size())
                              ? analysis.variants[static_cast<size_t>(skipped.config.variant)].name
                              : std::string());
    json.Field("label", skipped.config.Label());
    json.Field("reason", skipped.reason);
    json.EndObject();
  }
  json.EndArray();
}

void WriteServer(const std::optional<loadgen::ServerBreakdown>& server, JsonWriter& json) {
  json.Key("server");
  if (!server.has_value()) {
    json.Null();
    return;
  }
  json.BeginObject();
  json.Field("requests", server->requests);
  json.Field("queue_us", server->queue_ns * 1e-3);
  json.Field("compute_input_us", server->compute_input_ns * 1e-3);
  json.Field("compute_infer_us", server->compute_infer_ns * 1e-3);
  json.Field("compute_output_us", server->compute_output_ns * 1e-3);
  json.Field("request_us", server->request_ns * 1e-3);
  json.Field("executions", server->executions);
  json.Field("mean_batch_size", server->mean_batch_size);
  json.EndObject();
}

void WritePoints(const Analysis& analysis, JsonWriter& json) {
  const Recommendation& recommendation = analysis.recommendation;
  json.Key("points");
  json.BeginArray();
  for (size_t i = 0; i < analysis.points.size(); ++i) {
    const PointResult& point = analysis.points[i];
    json.BeginObject();
    json.Field("id", i);
    json.Field("config", point.config);
    json.Field("variant", analysis.configs[point.config].variant);
    json.Field("label", analysis.PointLabel(i));
    json.Key("load");
    json.BeginObject();
    json.Field("mode", loadgen::LoadModeName(point.mode));
    json.Field("concurrency", point.concurrency);
    json.Field("rate", point.target_rate_per_s);
    json.EndObject();
    json.Key("latency_ms");
    json.BeginObject();
    json.Field("p50", point.p50_ms);
    json.Field("p90", point.p90_ms);
    json.Field("p99", point.p99_ms);
    json.Field("mean", point.mean_ms);
    json.EndObject();
    json.Field("throughput_per_s", point.throughput_per_s);
    json.Field("ok", point.ok);
    json.Field("failed", point.failed);
    json.Field("accuracy", point.accuracy);
    WriteServer(point.server, json);
    json.Field("on_frontier", ListsPoint(analysis.frontier, i));
    json.Field("meets_slo", ListsPoint(recommendation.feasible, i));
    json.Field("recommended", recommendation.status == Recommendation::Status::kChosen &&
                                  recommendation.chosen == i);
    json.Field("error", point.error);
    json.EndObject();
  }
  json.EndArray();
  json.Key("frontier");
  json.BeginArray();
  for (size_t i : analysis.frontier) json.Int(static_cast<int64_t>(i));
  json.EndArray();
}

void WriteRecommendation(const Analysis& analysis, JsonWriter& json) {
  const Recommendation& recommendation = analysis.recommendation;
  const bool chosen = recommendation.status == Recommendation::Status::kChosen;
  json.Key("recommendation");
  json.BeginObject();
  json.Field("status", RecommendationStatusName(recommendation.status));
  json.Key("point");
  chosen ? json.Int(static_cast<int64_t>(recommendation.chosen)) : json.Null();
  json.Field("label", chosen ? analysis.PointLabel(recommendation.chosen) : std::string());
  json.Field("baseline_accuracy", recommendation.baseline_accuracy);
  json.Key("feasible");
  json.BeginArray();
  for (size_t i : recommendation.feasible) json.Int(static_cast<int64_t>(i));
  json.EndArray();
  json.Field("text", RecommendationText(analysis));
  json.Field("config_path", analysis.recommended_config_path);
  json.Key("nearest");
  json.BeginArray();
  for (const Shortfall& miss : recommendation.nearest) {
    json.BeginObject();
    json.Field("point", miss.index);
    json.Field("label", analysis.PointLabel(miss.index));
    json.Field("p99_over_ms", miss.p99_over_ms);
    json.Field("accuracy_drop_over", miss.accuracy_drop_over);
    json.Field("throughput_under_per_s", miss.throughput_under_per_s);
    json.Field("distance", miss.distance);
    json.Field("why", DescribeShortfall(miss, analysis.points[miss.index].objectives(),
                                        analysis.settings.slo, recommendation.baseline_accuracy));
    json.EndObject();
  }
  json.EndArray();
  json.EndObject();
}

}  // namespace

std::string FormatAnalysisJson(const Analysis& analysis) {
  JsonWriter json;
  json.BeginObject();
  json.Field("tool", std::string_view("brigade analyze"));
  json.Field("format", 1);
  json.Field("command", analysis.settings.command_line);
  WriteSettings(analysis.settings, json);
  WriteVariants(analysis, json);
  WriteConfigs(analysis, json);
  WritePoints(analysis, json);
  WriteRecommendation(analysis, json);
  json.EndObject();
  std::string text = json.Take();
  text += '\n';
  return text;
}

}  // namespace brigade::analyze
