#ifndef BRIGADE_TELEMETRY_SPAN_DATA_H_
#define BRIGADE_TELEMETRY_SPAN_DATA_H_

// SpanData: one finished span as exporters see it, following the OTLP trace data model
// (OTLP's span model): ids, name, kind, wall-clock start/end in ns since the Unix epoch,
// attributes, timestamped events and a status. A plain value type.

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "telemetry/trace_context.h"

namespace brigade::telemetry {

// OTLP enum values (they go on the wire as these integers).
enum class SpanKind : uint8_t { kUnspecified = 0, kInternal = 1, kServer = 2, kClient = 3 };
enum class SpanStatusCode : uint8_t { kUnset = 0, kOk = 1, kError = 2 };

struct SpanAttribute {
  std::string key{};
  std::variant<std::string, int64_t, bool, double> value{};
};

struct SpanEvent {
  std::string name{};
  int64_t time_unix_ns = 0;
};

struct SpanData {
  TraceId trace_id{};
  SpanId span_id{};
  SpanId parent_span_id{};  // all zero for a root span
  std::string trace_state{};
  // OTLP Span.flags: W3C trace flags in bits 0-7; bit 8 set when bit 9 says whether the parent
  // span is remote (another process).
  uint32_t flags = 0;
  std::string name{};
  SpanKind kind = SpanKind::kInternal;
  int64_t start_unix_ns = 0;
  int64_t end_unix_ns = 0;
  std::vector<SpanAttribute> attributes{};
  std::vector<SpanEvent> events{};
  SpanStatusCode status = SpanStatusCode::kUnset;
  std::string status_message{};
};

}  // namespace brigade::telemetry

#endif  // BRIGADE_TELEMETRY_SPAN_DATA_H_
