#include "server/request_observer.h"

#include <cstdlib>
#include <cstring>
#include <utility>

#include "core/status_macros.h"
#include "core/strings.h"
#include "telemetry/otlp_exporter.h"
#include "telemetry/trace_file_exporter.h"
#include "telemetry/triton_metrics.h"

#ifndef BRIGADE_VERSION
#define BRIGADE_VERSION "0.0.0"
#endif

namespace brigade {

absl::StatusOr<std::unique_ptr<RequestObserver>> RequestObserver::Create(Options options) {
  auto observer = std::make_unique<RequestObserver>(ConstructionTag());
  BRIGADE_ASSIGN_OR_RETURN(observer->metrics_,
                           telemetry::RequestMetrics::Create(&observer->registry_));

  telemetry::OtlpResource resource;
  resource.service_version = BRIGADE_VERSION;
  resource.scope_version = BRIGADE_VERSION;
  std::vector<std::unique_ptr<telemetry::SpanExporter>> exporters;
  if (!options.otlp_endpoint.empty()) {
    telemetry::OtlpHttpExporter::Options otlp;
    otlp.endpoint = options.otlp_endpoint;
    otlp.resource = resource;
    // OTEL_* variables (service name, resource attributes, timeouts) refine the flags.
    otlp = telemetry::OtlpOptionsFromEnvironment(otlp, [](const char* name) -> const char* {
      return std::strcmp(name, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == 0 ||
                     std::strcmp(name, "OTEL_EXPORTER_OTLP_ENDPOINT") == 0
                 ? nullptr  // the flag wins over the environment for the endpoint
                 : std::getenv(name);
    });
    BRIGADE_ASSIGN_OR_RETURN(auto otlp_exporter,
                             telemetry::OtlpHttpExporter::Create(std::move(otlp)));
    exporters.push_back(std::move(otlp_exporter));
  }
  if (!options.trace_file.empty()) {
    BRIGADE_ASSIGN_OR_RETURN(auto file_exporter,
                             telemetry::TraceFileExporter::Create(options.trace_file, resource));
    exporters.push_back(std::move(file_exporter));
  }
  std::unique_ptr<telemetry::SpanExporter> exporter;
  if (exporters.size() == 1) {
    exporter = std::move(exporters.front());
  } else if (exporters.size() > 1) {
    exporter = std::make_unique<telemetry::TeeSpanExporter>(std::move(exporters));
  }
  if (exporter != nullptr) {
    telemetry::SpanProcessor::Options processor;
    processor.registry = &observer->registry_;
    BRIGADE_ASSIGN_OR_RETURN(observer->spans_,
                             telemetry::SpanProcessor::Create(processor, std::move(exporter)));
    telemetry::Tracer::Options tracer;
    tracer.sample_rate = options.trace_rate;
    tracer.sample_errors = options.trace_errors;
    tracer.slo_ns = absl::ToInt64Nanoseconds(options.trace_slo);
    tracer.clock = options.clock;
    BRIGADE_ASSIGN_OR_RETURN(observer->tracer_,
                             telemetry::Tracer::Create(tracer, observer->spans_.get()));
  } else if (options.trace_rate > 0 || options.trace_slo > absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "trace sampling is set but no trace destination (OTLP endpoint or trace file) is given");
  }

  observer->trace_control_ = std::make_unique<telemetry::TraceControl>(
      telemetry::TraceControl::Options{.sample_rate = options.trace_rate,
                                       .has_destination = observer->tracer_ != nullptr,
                                       .trace_file = options.trace_file});

  if (!options.access_log_path.empty()) {
    telemetry::AccessLog::Options log;
    log.path = options.access_log_path;
    log.sample_rate = options.access_log_rate;
    log.clock = options.clock;
    BRIGADE_ASSIGN_OR_RETURN(observer->access_log_, telemetry::AccessLog::Create(log));
  }
  return observer;
}

RequestObserver::~RequestObserver() { Flush(absl::Seconds(1)); }

void RequestObserver::OnRequestDone(const Done& done) {
  static const StageClock kNoStamps;
  static const std::optional<telemetry::TraceContext> kNoParent;
  const StageClock& clock = done.clock != nullptr ? *done.clock : kNoStamps;
  const std::optional<telemetry::TraceContext>& parent =
      done.parent != nullptr ? *done.parent : kNoParent;
  metrics_->RecordRequest(done.model, done.version, done.protocol,
                          telemetry::OutcomeFromStatus(done.status), clock);
  telemetry::TraceResult trace;
  if (tracer_ != nullptr) {
    trace = tracer_->Finish(parent,
                            {done.model, done.version, done.request_id, done.protocol, done.status,
                             done.batch_size, done.cache_hit, done.steps},
                            clock, trace_control_->SamplingFor(done.model));
    if (trace.sampled()) trace_control_->Traced(done.model);
  }
  if (access_log_ != nullptr) {
    telemetry::AccessLogEntry entry;
    entry.request_id = done.request_id;
    entry.model = done.model;
    entry.version = done.version;
    entry.protocol = done.protocol;
    entry.status = done.status;
    entry.protocol_code = done.protocol_code;
    entry.batch_size = done.batch_size;
    entry.cache_hit = done.cache_hit;
    if (trace.sampled()) entry.trace_id = trace.trace_id;
    entry.clock = clock;
    access_log_->Record(entry);
  }
}

telemetry::ModelRequestMetrics* RequestObserver::ForModel(std::string_view model,
                                                          std::string_view version) {
  return metrics_->ForModel(model, version);
}

std::string RequestObserver::RenderMetrics(
    const std::vector<protocol::ModelStatistics>& stats) const {
  std::string body;
  registry_.AppendText(&body);
  telemetry::AppendTritonMetrics(stats, metrics_.get(), &body);
  return body;
}

std::vector<protocol::StageLatency> RequestObserver::StageSummary(std::string_view model,
                                                                  std::string_view version) const {
  const telemetry::ModelRequestMetrics* handle = metrics_->Lookup(model, version);
  return handle == nullptr ? std::vector<protocol::StageLatency>{} : handle->StageSummary();
}

void RequestObserver::Flush(absl::Duration timeout) {
  if (spans_ != nullptr) spans_->Flush(timeout);
  if (access_log_ != nullptr) access_log_->Flush(timeout);
}

}  // namespace brigade
