#ifndef BRIGADE_PROCESS_UTF8_H_
#define BRIGADE_PROCESS_UTF8_H_

// UTF-8 as the text steps read it: validation (the tokenizers' inputs come from the network),
// then decoding that may assume validity, and encoding. Valid means RFC 3629: shortest forms
// only, no surrogates (U+D800..U+DFFF), nothing above U+10FFFF.
//
// Thread safety: pure functions. Failure: FindInvalidUtf8 reports the offset of the first byte
// of the first ill-formed sequence; the others have no failure (DecodeUtf8's input must be
// valid).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace brigade::process {

constexpr bool IsUtf8Continuation(char c) { return (static_cast<uint8_t>(c) & 0xC0) == 0x80; }

// The offset of the first ill-formed sequence of `text`, or npos when it is all valid.
inline size_t FindInvalidUtf8(std::string_view text) {
  const auto* p = reinterpret_cast<const uint8_t*>(text.data());
  const size_t n = text.size();
  for (size_t i = 0; i < n;) {
    const uint8_t b = p[i];
    if (b < 0x80) {
      ++i;
      continue;
    }
    size_t length = 0;
    uint8_t low = 0x80;  // bounds of the second byte, which exclude overlongs and surrogates
    uint8_t high = 0xBF;
    if (b >= 0xC2 && b <= 0xDF) {
      length = 2;
    } else if (b >= 0xE0 && b <= 0xEF) {
      length = 3;
      if (b == 0xE0) low = 0xA0;
      if (b == 0xED) high = 0x9F;
    } else if (b >= 0xF0 && b <= 0xF4) {
      length = 4;
      if (b == 0xF0) low = 0x90;
      if (b == 0xF4) high = 0x8F;
    } else {
      return i;
    }
    if (n - i < length || p[i + 1] < low || p[i + 1] > high) return i;
    for (size_t k = 2; k < length; ++k) {
      if (!IsUtf8Continuation(static_cast<char>(p[i + k]))) return i;
    }
    i += length;
  }
  return std::string_view::npos;
}

// Decodes the code point at `*i` of valid UTF-8 and moves `*i` past it.
inline char32_t DecodeUtf8(std::string_view text, size_t* i) {
  const auto* p = reinterpret_cast<const uint8_t*>(text.data()) + *i;
  if (p[0] < 0x80) {
    *i += 1;
    return p[0];
  }
  if (p[0] < 0xE0) {
    *i += 2;
    return (char32_t{p[0] & 0x1Fu} << 6) | (p[1] & 0x3Fu);
  }
  if (p[0] < 0xF0) {
    *i += 3;
    return (char32_t{p[0] & 0x0Fu} << 12) | (char32_t{p[1] & 0x3Fu} << 6) | (p[2] & 0x3Fu);
  }
  *i += 4;
  return (char32_t{p[0] & 0x07u} << 18) | (char32_t{p[1] & 0x3Fu} << 12) |
         (char32_t{p[2] & 0x3Fu} << 6) | (p[3] & 0x3Fu);
}

// Appends the UTF-8 of code point `c` (at most U+10FFFF, not a surrogate).
inline void AppendUtf8(char32_t c, std::string* out) {
  if (c < 0x80) {
    out->push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (c >> 6)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (c >> 12)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (c >> 18)));
    out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

}  // namespace brigade::process

#endif  // BRIGADE_PROCESS_UTF8_H_
