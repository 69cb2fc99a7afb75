#ifndef BRIGADE_SERVER_REQUEST_OBSERVER_H_
#define BRIGADE_SERVER_REQUEST_OBSERVER_H_

// RequestObserver: where a finished request is reported, once, by the front end that answered
// it (at t5, when the last byte was written, or when writing failed): Prometheus metrics per
// model and stage, the sampled OpenTelemetry trace, and the sampled access log line. It also
// owns the metrics registry, so /metrics is rendered from here.
//
// Thread safety: OnRequestDone and the accessors are safe from any thread and never block
// (traces and log lines go to bounded background queues that drop when full, counted).
// Ownership: owns the registry, request metrics, tracer, span processor and access log; the
// InferenceServer owns the observer and keeps it alive until every front end has stopped.
// Failure: Create fails with INVALID_ARGUMENT for bad options (rates outside [0, 1], an unusable
// OTLP endpoint) and UNAVAILABLE when the trace file or access log cannot be opened.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/clock.h"
#include "core/infer_request.h"
#include "core/infer_response.h"
#include "core/stage_clock.h"
#include "telemetry/access_log.h"
#include "telemetry/metrics_registry.h"
#include "telemetry/model_stats.h"
#include "telemetry/request_metrics.h"
#include "telemetry/span_processor.h"
#include "telemetry/trace_context.h"
#include "telemetry/trace_control.h"
#include "telemetry/tracer.h"

namespace brigade {

class RequestObserver {
 public:
  struct Options {
    // Trace sampling: this fraction of requests, plus every failed one (trace_errors) and every
    // one slower than trace_slo end to end (when positive).
    double trace_rate = 0.0;
    bool trace_errors = false;
    absl::Duration trace_slo = absl::ZeroDuration();
    // Where sampled traces go: an OTLP/HTTP JSON collector URL (".../v1/traces") and/or a
    // JSON-lines file. Neither: tracing is off.
    std::string otlp_endpoint;
    std::string trace_file;
    // JSON-lines access log; empty = off.
    std::string access_log_path;
    double access_log_rate = 1.0;
    const Clock* clock = Clock::Real();
  };

  static absl::StatusOr<std::unique_ptr<RequestObserver>> Create(Options options);
  ~RequestObserver();

  // One finished request. Views are borrowed for the call only.
  struct Done {
    std::string_view model{};
    std::string_view version{};  // resolved version when known, else what was asked for
    std::string_view request_id{};
    Protocol protocol = Protocol::kHttp;
    absl::Status status{};
    std::optional<int> protocol_code{};  // HTTP status or gRPC code sent
    const StageClock* clock = nullptr;   // t0..t5 as far as the request got
    const std::optional<telemetry::TraceContext>* parent = nullptr;
    int batch_size = 0;
    bool cache_hit = false;
    std::span<const StepRecord> steps{};  // an ensemble's steps (a trace span each)
  };
  void OnRequestDone(const Done& done);

  // The per-model handle a scheduler updates (queue length, busy instances, batch sizes).
  telemetry::ModelRequestMetrics* ForModel(std::string_view model, std::string_view version);
  // The request metrics behind ForModel (the repository creates each version's handle there).
  telemetry::RequestMetrics* request_metrics() const { return metrics_.get(); }
  // The registry /metrics renders, for families the front ends own (auth refusals, refused
  // connections).
  telemetry::MetricsRegistry* registry() { return &registry_; }

  // The Prometheus exposition: Brigade's families plus Triton-compatible nv_* ones built from
  // `stats`.
  std::string RenderMetrics(const std::vector<protocol::ModelStatistics>& stats) const;

  // Per-stage percentiles of one model version (for the statistics extension); empty when the
  // version has served nothing.
  std::vector<protocol::StageLatency> StageSummary(std::string_view model,
                                                   std::string_view version) const;

  // Waits up to `timeout` for queued traces and log lines to be written (shutdown).
  void Flush(absl::Duration timeout);

  bool tracing() const { return tracer_ != nullptr; }
  // Triton's trace settings over the tracer (telemetry/trace_control.h); always present (without
  // a trace destination it answers that nothing is traced).
  telemetry::TraceControl* trace_control() const { return trace_control_.get(); }

  struct ConstructionTag {
   private:
    friend class RequestObserver;
    ConstructionTag() = default;
  };
  explicit RequestObserver(ConstructionTag) {}

 private:
  telemetry::MetricsRegistry registry_;
  std::unique_ptr<telemetry::RequestMetrics> metrics_;
  std::unique_ptr<telemetry::SpanProcessor> spans_;
  std::unique_ptr<telemetry::Tracer> tracer_;
  std::unique_ptr<telemetry::TraceControl> trace_control_;
  std::unique_ptr<telemetry::AccessLog> access_log_;
};

}  // namespace brigade

#endif  // BRIGADE_SERVER_REQUEST_OBSERVER_H_
