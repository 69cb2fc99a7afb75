#include "telemetry/triton_metrics.h"

#include <array>
#include <cstdint>
#include <functional>

#include "protocol/failure_reason.h"
#include "telemetry/prometheus_text.h"

namespace brigade::telemetry {
namespace {

struct CounterField {
  std::string_view name;
  std::string_view help;
  std::function<uint64_t(const protocol::ModelStatistics&)> value;
};

uint64_t Micros(uint64_t ns) { return ns / 1000; }

}  // namespace

void AppendTritonMetrics(std::span<const protocol::ModelStatistics> models,
                         const RequestMetrics* request_metrics, std::string* out) {
  if (models.empty()) return;
  const std::array<CounterField, 10> fields = {{
      {"nv_inference_request_success", "Number of successful inference requests, all batch sizes",
       [](const protocol::ModelStatistics& s) { return s.inference_stats.success.count; }},
      {"nv_inference_count", "Number of inferences performed (does not include cached requests)",
       [](const protocol::ModelStatistics& s) { return s.inference_count; }},
      {"nv_inference_exec_count",
       "Number of model executions performed (does not include cached requests)",
       [](const protocol::ModelStatistics& s) { return s.execution_count; }},
      {"nv_inference_request_duration_us",
       "Cumulative inference request duration in microseconds (includes cached requests)",
       [](const protocol::ModelStatistics& s) { return Micros(s.inference_stats.success.ns); }},
      {"nv_inference_queue_duration_us", "Cumulative inference queuing duration in microseconds",
       [](const protocol::ModelStatistics& s) { return Micros(s.inference_stats.queue.ns); }},
      {"nv_inference_compute_input_duration_us",
       "Cumulative compute input duration in microseconds",
       [](const protocol::ModelStatistics& s) {
         return Micros(s.inference_stats.compute_input.ns);
       }},
      {"nv_inference_compute_infer_duration_us",
       "Cumulative compute inference duration in microseconds",
       [](const protocol::ModelStatistics& s) {
         return Micros(s.inference_stats.compute_infer.ns);
       }},
      {"nv_inference_compute_output_duration_us",
       "Cumulative inference compute output duration in microseconds",
       [](const protocol::ModelStatistics& s) {
         return Micros(s.inference_stats.compute_output.ns);
       }},
      {"nv_cache_num_hits_per_model", "Number of cache hits per model",
       [](const protocol::ModelStatistics& s) { return s.inference_stats.cache_hit.count; }},
      {"nv_cache_num_misses_per_model", "Number of cache misses per model",
       [](const protocol::ModelStatistics& s) { return s.inference_stats.cache_miss.count; }},
  }};
  PrometheusTextWriter writer(out);
  for (const CounterField& field : fields) {
    writer.Family(field.name, field.help, MetricType::kCounter);
    for (const protocol::ModelStatistics& model : models) {
      const LabelPair labels[] = {{"model", model.name}, {"version", model.version}};
      writer.Sample(field.name, labels, field.value(model));
    }
  }
  // Failures by reason: every reason's series for every model version, zeros included (Triton
  // creates them with the model), so rate() over a reason works from its first failure on.
  writer.Family("nv_inference_request_failure",
                "Number of failed inference requests, all batch sizes", MetricType::kCounter);
  for (const protocol::ModelStatistics& model : models) {
    for (int i = 0; i < protocol::kNumFailureReasons; ++i) {
      const LabelPair labels[] = {
          {"model", model.name},
          {"version", model.version},
          {"reason", protocol::FailureReasonName(static_cast<protocol::FailureReason>(i))}};
      writer.Sample("nv_inference_request_failure", labels, model.fail_by_reason[i]);
    }
  }
  if (request_metrics == nullptr) return;
  bool wrote_family = false;
  for (const protocol::ModelStatistics& model : models) {
    const ModelRequestMetrics* handle = request_metrics->Lookup(model.name, model.version);
    if (handle == nullptr) continue;
    if (!wrote_family) {
      writer.Family("nv_inference_pending_request_count",
                    "Instantaneous number of pending requests awaiting execution per-model.",
                    MetricType::kGauge);
      wrote_family = true;
    }
    const LabelPair labels[] = {{"model", model.name}, {"version", model.version}};
    writer.Sample("nv_inference_pending_request_count", labels, handle->queue_length().Value());
  }
}

}  // namespace brigade::telemetry
