#ifndef BRIGADE_OBSERVE_JSON_TEXT_H_
#define BRIGADE_OBSERVE_JSON_TEXT_H_

// Minimal JSON text helpers for the observability writers (OTLP JSON, access log). Observe sits
// below serve/, so it cannot use the HTTP codec's writer; these cover what observability output
// needs: strings and numbers. Pure functions; thread-safe.

#include <string>
#include <string_view>

namespace brigade::observe {

// Appends `text` as a quoted JSON string: `"` and `\` escaped, control characters as \n, \t ...
// or \u00XX, and bytes that are not valid UTF-8 replaced by U+FFFD (model names and request ids
// come from clients; the output must stay valid JSON for any input).
void AppendJsonString(std::string_view text, std::string* out);

// Appends a finite double in its shortest exact form; NaN and infinities as null (JSON has none).
void AppendJsonNumber(double value, std::string* out);

}  // namespace brigade::observe

#endif  // BRIGADE_OBSERVE_JSON_TEXT_H_
