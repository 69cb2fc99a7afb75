#include "core/json_text.h"

#include <array>
#include <charconv>
#include <cmath>

namespace brigade {
namespace {

// True for the bytes a JSON string cannot hold literally: control characters, '"' and '\\'.
constexpr std::array<bool, 256> MakeEscapeTable() {
  std::array<bool, 256> table{};
  for (int c = 0; c < 0x20; ++c) table[c] = true;
  table['"'] = true;
  table['\\'] = true;
  return table;
}
constexpr std::array<bool, 256> kNeedsEscape = MakeEscapeTable();

void AppendEscape(unsigned char c, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  switch (c) {
    case '"':
      out->append("\\\"");
      break;
    case '\\':
      out->append("\\\\");
      break;
    case '\n':
      out->append("\\n");
      break;
    case '\r':
      out->append("\\r");
      break;
    case '\t':
      out->append("\\t");
      break;
    case '\b':
      out->append("\\b");
      break;
    case '\f':
      out->append("\\f");
      break;
    default: {
      const char escape[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xF]};
      out->append(escape, sizeof(escape));
    }
  }
}

template <typename Number>
void AppendNumber(Number value, std::string* out) {
  char buffer[32];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  (void)ec;  // 32 bytes hold any shortest-form double or 64-bit integer
  out->append(buffer, end);
}

template <typename Float>
void AppendFloating(Float value, std::string* out) {
  if (std::isnan(value)) {
    out->append("NaN");
  } else if (std::isinf(value)) {
    out->append(value > 0 ? "Infinity" : "-Infinity");
  } else {
    AppendNumber(value, out);
  }
}

}  // namespace

void AppendJsonString(std::string_view text, std::string* out) {
  out->push_back('"');
  const size_t size = text.size();
  size_t run_start = 0;
  size_t i = 0;
  for (;;) {
    // Copy the longest run that needs no escaping in one append.
    while (i < size && !kNeedsEscape[static_cast<unsigned char>(text[i])]) ++i;
    out->append(text.data() + run_start, i - run_start);
    if (i == size) break;
    AppendEscape(static_cast<unsigned char>(text[i]), out);
    run_start = ++i;
  }
  out->push_back('"');
}

void AppendJsonInt(int64_t value, std::string* out) { AppendNumber(value, out); }
void AppendJsonUint(uint64_t value, std::string* out) { AppendNumber(value, out); }
void AppendJsonDouble(double value, std::string* out) { AppendFloating(value, out); }
void AppendJsonFloat(float value, std::string* out) { AppendFloating(value, out); }

size_t ValidUtf8PrefixLength(std::string_view text) {
  // The well-formed byte sequences of the Unicode Standard (table 3-7): the lead byte gives the
  // length, and the second byte's range excludes overlong forms (after 0xE0, 0xF0), surrogates
  // (after 0xED) and code points above U+10FFFF (after 0xF4).
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  const size_t size = text.size();
  size_t i = 0;
  while (i < size) {
    const unsigned char lead = bytes[i];
    if (lead < 0x80) {
      ++i;
      continue;
    }
    size_t length;
    unsigned char min_second = 0x80;
    unsigned char max_second = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) {
      length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3;
      if (lead == 0xE0) min_second = 0xA0;
      if (lead == 0xED) max_second = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4;
      if (lead == 0xF0) min_second = 0x90;
      if (lead == 0xF4) max_second = 0x8F;
    } else {
      return i;
    }
    if (size - i < length) return i;
    if (bytes[i + 1] < min_second || bytes[i + 1] > max_second) return i;
    for (size_t k = 2; k < length; ++k) {
      if ((bytes[i + k] & 0xC0) != 0x80) return i;
    }
    i += length;
  }
  return size;
}

}  // namespace brigade
