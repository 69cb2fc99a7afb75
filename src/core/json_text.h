#ifndef BRIGADE_CORE_JSON_TEXT_H_
#define BRIGADE_CORE_JSON_TEXT_H_

// JSON tokens appended to a std::string, and the UTF-8 check that decides whether text may be
// written as a JSON string. The one implementation behind the HTTP front end's JsonWriter (every
// JSON response), the client's request bodies and the observability writers.
//
// Strings: AppendJsonString writes `"`, the text and `"`; quotes and backslashes are escaped,
// \b \f \n \r \t get their short escapes, other control characters (< 0x20) become \u00XX, and
// every other byte, 0x7F and non-ASCII included, is copied as is. It does not validate: the
// caller passes UTF-8 (IsValidUtf8 checks it) or gets a string that is not valid JSON.
// Runs of bytes that need no escape are copied with one append, so plain text costs one scan.
//
// Numbers: std::to_chars in its shortest round-trip form (the shorter of fixed and scientific,
// so 100000.0 is "1e+05"); FP32 values in float's shortest form, so 0.1f is "0.1", not
// "0.10000000149011612". JSON has no spelling for non-finite numbers: they are written NaN,
// Infinity and -Infinity, as Triton writes them and Python's json module reads them; a writer
// that must stay strict JSON checks std::isfinite first.
//
// Commas, colons and brackets are the caller's (JsonWriter places them). Pure functions;
// thread-safe.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace brigade {

void AppendJsonString(std::string_view text, std::string* out);

void AppendJsonInt(int64_t value, std::string* out);
void AppendJsonUint(uint64_t value, std::string* out);
void AppendJsonDouble(double value, std::string* out);
void AppendJsonFloat(float value, std::string* out);

// The length of the longest prefix of `text` that is well-formed UTF-8: text.size() when all of
// it is, otherwise the offset of the first byte that does not start a well-formed sequence
// (a stray continuation byte, 0xC0, 0xC1 or 0xF5..0xFF, an overlong form, a surrogate
// U+D800..U+DFFF, a code point above U+10FFFF, or a sequence cut short).
size_t ValidUtf8PrefixLength(std::string_view text);

// True when `text` is well-formed UTF-8 (see ValidUtf8PrefixLength).
inline bool IsValidUtf8(std::string_view text) {
  return ValidUtf8PrefixLength(text) == text.size();
}

}  // namespace brigade

#endif  // BRIGADE_CORE_JSON_TEXT_H_
