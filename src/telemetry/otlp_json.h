#ifndef BRIGADE_TELEMETRY_OTLP_JSON_H_
#define BRIGADE_TELEMETRY_OTLP_JSON_H_

// The OTLP/JSON encoding of spans: an ExportTraceServiceRequest body for POST /v1/traces, and
// the same object as one line of a JSON-lines trace file (the OpenTelemetry Collector's file
// exporter format, readable by its otlpjsonfile receiver).
//
// OTLP/JSON rules followed: lowerCamelCase keys; trace and span ids as
// lowercase hex; 64-bit integers (times, int attributes) as decimal strings; enums (kind, status
// code) as integers; flags as a number; a root span has no parentSpanId.
// Pure functions; thread-safe.

#include <span>
#include <string>
#include <utility>
#include <vector>

#include "telemetry/span_data.h"

namespace brigade::telemetry {

// Who produced the spans: the resource (service) and instrumentation scope.
struct OtlpResource {
  std::string service_name = "brigade";
  std::string service_version{};
  // Extra resource attributes, e.g. {"host.name", "node-1"} (OTEL_RESOURCE_ATTRIBUTES).
  std::vector<std::pair<std::string, std::string>> attributes{};
  std::string scope_name = "brigade";
  std::string scope_version{};
};

// {"resourceSpans":[{"resource":{...},"scopeSpans":[{"scope":{...},"spans":[...]}]}]}
std::string EncodeOtlpTraceRequest(std::span<const SpanData> spans, const OtlpResource& resource);

}  // namespace brigade::telemetry

#endif  // BRIGADE_TELEMETRY_OTLP_JSON_H_
