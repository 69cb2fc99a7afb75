#ifndef BRIGADE_PROTOCOL_TRACE_SETTINGS_H_
#define BRIGADE_PROTOCOL_TRACE_SETTINGS_H_

// Triton's trace extension: the settings GET/POST /v2[/models/{m}]/trace/setting and gRPC
// TraceSetting carry, as the wire has them: each setting a list of strings (trace_level may hold
// several, the others hold one: "trace_rate": "1000"). What they mean for Brigade's tracer is
// telemetry/trace_control.h's business. Plain value types shared by the codecs and the server;
// no behaviour.

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace brigade::protocol {

// The settings answered, in a fixed order (trace_level, trace_rate, trace_count, log_frequency,
// trace_file, trace_mode).
using TraceSettings = std::vector<std::pair<std::string, std::vector<std::string>>>;

// One setting a request changes; no value (JSON null, a gRPC SettingValue with no strings) clears
// it: a model's setting falls back to the global one, a global one to its start-up value.
struct TraceSettingChange {
  std::string key;
  std::optional<std::vector<std::string>> value;

  friend bool operator==(const TraceSettingChange&, const TraceSettingChange&) = default;
};
using TraceSettingsUpdate = std::vector<TraceSettingChange>;

}  // namespace brigade::protocol

#endif  // BRIGADE_PROTOCOL_TRACE_SETTINGS_H_
