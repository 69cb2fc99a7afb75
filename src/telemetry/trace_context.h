#ifndef BRIGADE_TELEMETRY_TRACE_CONTEXT_H_
#define BRIGADE_TELEMETRY_TRACE_CONTEXT_H_

// W3C Trace Context (https://www.w3.org/TR/trace-context/): the `traceparent`
// and `tracestate` headers (HTTP headers, or gRPC metadata under the same lowercase keys).
//
//   traceparent: 00-<trace-id: 32 lowercase hex>-<parent-id: 16 lowercase hex>-<flags: 2 hex>
//
// Parsing is strict, as the spec's test suite expects:
//   * lowercase hex only; all-zero trace-id or parent-id is invalid; version ff is invalid;
//   * version 00 is exactly 55 characters; a higher version is parsed by its first four fields
//     when it is at least 55 characters and the flags are followed by the end or a `-`;
//   * tracestate: at most 32 list members, separated by commas with optional spaces/tabs around
//     them (empty members allowed and dropped); keys per the Level 1 grammar (simple-key or
//     tenant@system multi-tenant key); values of 1..256 printable characters without `,` or `=`
//     and not ending in a space; duplicate keys make the whole header invalid.
// A receiver that gets an invalid traceparent starts a new trace and ignores tracestate; an
// invalid tracestate is dropped without affecting traceparent (ExtractTraceContext does both).
//
// Pure functions and value types; thread-safe. Id generation uses fast_random.h.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace brigade::telemetry {

// Bit 0 of trace-flags: the caller may have recorded this trace.
inline constexpr uint8_t kTraceFlagSampled = 0x01;
// Bit 1 (Trace Context Level 2): the trace-id's right 7 bytes are random.
inline constexpr uint8_t kTraceFlagRandom = 0x02;

struct TraceId {
  std::array<uint8_t, 16> bytes{};
  bool valid() const;  // not all zero
  std::string Hex() const;
  friend bool operator==(const TraceId&, const TraceId&) = default;
};

struct SpanId {
  std::array<uint8_t, 8> bytes{};
  bool valid() const;  // not all zero
  std::string Hex() const;
  friend bool operator==(const SpanId&, const SpanId&) = default;
};

// A trace id of 16 random bytes, never all zero.
TraceId NewTraceId();
// A span id of 8 random bytes, never all zero.
SpanId NewSpanId();

// The context a request arrived with.
struct TraceContext {
  TraceId trace_id{};
  SpanId parent_span_id{};    // the caller's span
  uint8_t flags = 0;          // as received; only known bits are sent onward
  std::string trace_state{};  // validated, normalized tracestate; empty when absent or invalid

  bool sampled() const { return (flags & kTraceFlagSampled) != 0; }
};

// INVALID_ARGUMENT (saying which rule failed) unless `value` is a valid traceparent.
// Surrounding spaces/tabs (HTTP optional whitespace) are ignored.
absl::StatusOr<TraceContext> ParseTraceparent(std::string_view value);

// The tracestate list with empty members and optional whitespace removed, members joined by
// ",", order kept; INVALID_ARGUMENT if any rule fails. An empty or blank header is valid ("").
absl::StatusOr<std::string> ParseTracestate(std::string_view value);

// What a receiving server does with the two headers (either may be absent): the context when
// traceparent is valid, carrying tracestate only if that is valid too; nullopt otherwise (start
// a new trace). Multiple tracestate headers must be joined with "," by the caller first.
std::optional<TraceContext> ExtractTraceContext(std::optional<std::string_view> traceparent,
                                                std::optional<std::string_view> tracestate);

// "00-<trace>-<span>-<flags>", keeping only the sampled and random flag bits.
std::string FormatTraceparent(const TraceId& trace_id, const SpanId& span_id, uint8_t flags);

}  // namespace brigade::telemetry

#endif  // BRIGADE_TELEMETRY_TRACE_CONTEXT_H_
