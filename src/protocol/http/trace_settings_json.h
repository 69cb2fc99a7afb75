#ifndef BRIGADE_PROTOCOL_HTTP_TRACE_SETTINGS_JSON_H_
#define BRIGADE_PROTOCOL_HTTP_TRACE_SETTINGS_JSON_H_

// Bodies of Triton's trace extension (HTTP):
//   GET  /v2[/models/{m}]/trace/setting   out: {"trace_level": ["TIMESTAMPS"],
//                                                "trace_rate": "1000", "trace_count": "-1", ...}
//   POST /v2[/models/{m}]/trace/setting   in:  any subset of the settings, each a string, an
//                                              array of strings, or null (clear the setting)
//                                         out: the settings after the change
// As Triton writes them, trace_level is answered as an array and every other setting as one
// string. A blank body changes nothing. A value of another type (a number, an object), an array
// holding a non-string, or malformed JSON is INVALID_ARGUMENT naming the setting; which keys and
// values the server honours is the server's business (telemetry/trace_control.h).
//
// Pure functions; thread-compatible.

#include <string>

#include "absl/status/statusor.h"
#include "protocol/http/body_buffer.h"
#include "protocol/trace_settings.h"

namespace brigade::protocol::http {

absl::StatusOr<protocol::TraceSettingsUpdate> DecodeTraceSettingsRequest(const BodyBuffer& body);
std::string EncodeTraceSettings(const protocol::TraceSettings& settings);

}  // namespace brigade::protocol::http

#endif  // BRIGADE_PROTOCOL_HTTP_TRACE_SETTINGS_JSON_H_
