#ifndef BRIGADE_TELEMETRY_JSON_TEXT_H_
#define BRIGADE_TELEMETRY_JSON_TEXT_H_

// JSON text for the observability writers (OTLP JSON, access log), built on core/json_text.h with
// the two differences their output needs: it must stay valid, strict JSON whatever a client sent
// or a model measured, so invalid UTF-8 is replaced rather than trusted and non-finite numbers
// become null rather than NaN / Infinity. Pure functions; thread-safe.

#include <string>
#include <string_view>

namespace brigade::telemetry {

// Appends `text` as a quoted JSON string escaped as brigade::AppendJsonString does (`"` and `\`,
// control characters as \n, \t ... or \u00XX), with each byte that does not belong to a
// well-formed UTF-8 sequence replaced by U+FFFD (model names and request ids come from clients;
// the output must stay valid JSON for any input).
void AppendJsonString(std::string_view text, std::string* out);

// Appends a finite double in brigade::AppendJsonDouble's shortest round-trip form; NaN and
// infinities as null (JSON has none).
void AppendJsonNumber(double value, std::string* out);

}  // namespace brigade::telemetry

#endif  // BRIGADE_TELEMETRY_JSON_TEXT_H_
