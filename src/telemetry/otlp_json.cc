#include "telemetry/otlp_json.h"

#include "core/strings.h"
#include "telemetry/json_text.h"

namespace brigade::telemetry {
namespace {

void AppendStringAttribute(std::string_view key, std::string_view value, std::string* out) {
  out->append("{\"key\":");
  AppendJsonString(key, out);
  out->append(",\"value\":{\"stringValue\":");
  AppendJsonString(value, out);
  out->append("}}");
}

void AppendAttribute(const SpanAttribute& attribute, std::string* out) {
  out->append("{\"key\":");
  AppendJsonString(attribute.key, out);
  out->append(",\"value\":{");
  std::visit(
      [&](const auto& value) {
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, std::string>) {
          out->append("\"stringValue\":");
          AppendJsonString(value, out);
        } else if constexpr (std::is_same_v<T, int64_t>) {
          fmt::format_to(std::back_inserter(*out), "\"intValue\":\"{}\"", value);
        } else if constexpr (std::is_same_v<T, bool>) {
          out->append(value ? "\"boolValue\":true" : "\"boolValue\":false");
        } else {
          out->append("\"doubleValue\":");
          AppendJsonNumber(value, out);
        }
      },
      attribute.value);
  out->append("}}");
}

void AppendSpan(const SpanData& span, std::string* out) {
  fmt::format_to(std::back_inserter(*out), "{{\"traceId\":\"{}\",\"spanId\":\"{}\"",
                 span.trace_id.Hex(), span.span_id.Hex());
  if (span.parent_span_id.valid()) {
    fmt::format_to(std::back_inserter(*out), ",\"parentSpanId\":\"{}\"", span.parent_span_id.Hex());
  }
  if (!span.trace_state.empty()) {
    out->append(",\"traceState\":");
    AppendJsonString(span.trace_state, out);
  }
  fmt::format_to(std::back_inserter(*out), ",\"flags\":{},\"name\":", span.flags);
  AppendJsonString(span.name, out);
  fmt::format_to(std::back_inserter(*out),
                 ",\"kind\":{},\"startTimeUnixNano\":\"{}\",\"endTimeUnixNano\":\"{}\"",
                 static_cast<int>(span.kind), span.start_unix_ns, span.end_unix_ns);
  out->append(",\"attributes\":[");
  for (size_t i = 0; i < span.attributes.size(); ++i) {
    if (i > 0) out->push_back(',');
    AppendAttribute(span.attributes[i], out);
  }
  out->append("],\"events\":[");
  for (size_t i = 0; i < span.events.size(); ++i) {
    if (i > 0) out->push_back(',');
    fmt::format_to(std::back_inserter(*out),
                   "{{\"timeUnixNano\":\"{}\",\"name\":", span.events[i].time_unix_ns);
    AppendJsonString(span.events[i].name, out);
    out->push_back('}');
  }
  fmt::format_to(std::back_inserter(*out), "],\"status\":{{\"code\":{}",
                 static_cast<int>(span.status));
  if (!span.status_message.empty()) {
    out->append(",\"message\":");
    AppendJsonString(span.status_message, out);
  }
  out->append("}}");
}

}  // namespace

std::string EncodeOtlpTraceRequest(std::span<const SpanData> spans, const OtlpResource& resource) {
  std::string out;
  out.reserve(256 + spans.size() * 512);
  out.append("{\"resourceSpans\":[{\"resource\":{\"attributes\":[");
  AppendStringAttribute("service.name", resource.service_name, &out);
  if (!resource.service_version.empty()) {
    out.push_back(',');
    AppendStringAttribute("service.version", resource.service_version, &out);
  }
  for (const auto& [key, value] : resource.attributes) {
    out.push_back(',');
    AppendStringAttribute(key, value, &out);
  }
  out.append("]},\"scopeSpans\":[{\"scope\":{\"name\":");
  AppendJsonString(resource.scope_name, &out);
  if (!resource.scope_version.empty()) {
    out.append(",\"version\":");
    AppendJsonString(resource.scope_version, &out);
  }
  out.append("},\"spans\":[");
  for (size_t i = 0; i < spans.size(); ++i) {
    if (i > 0) out.push_back(',');
    AppendSpan(spans[i], &out);
  }
  out.append("]}]}]}");
  return out;
}

}  // namespace brigade::telemetry
