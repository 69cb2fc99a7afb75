#ifndef BRIGADE_CLIENT_JSON_TEXT_H_
#define BRIGADE_CLIENT_JSON_TEXT_H_

// Appending JSON tokens to a std::string, for the client's request bodies. Numbers use
// std::to_chars (shortest round-trip form; FP32 in float's shortest form, so 0.1f is "0.1");
// non-finite numbers are written NaN / Infinity / -Infinity as Triton and Python's json do.
// Strings are escaped (quotes, backslash, control characters); other bytes are copied, so the
// caller passes UTF-8 (IsValidUtf8 checks it).
//
// The caller places commas and brackets itself: request bodies have a fixed shape, and a writer
// object would cost more than the few lines it saves. Pure functions; thread-safe.

#include <cstdint>
#include <string>
#include <string_view>

namespace brigade::client {

void AppendJsonString(std::string_view value, std::string* out);
void AppendJsonInt(int64_t value, std::string* out);
void AppendJsonUint(uint64_t value, std::string* out);
void AppendJsonDouble(double value, std::string* out);
void AppendJsonFloat(float value, std::string* out);

// True when `text` is well-formed UTF-8 (no overlong forms, surrogates or code points > U+10FFFF).
bool IsValidUtf8(std::string_view text);

}  // namespace brigade::client

#endif  // BRIGADE_CLIENT_JSON_TEXT_H_
