#include "client/json_text.h"

#include <charconv>
#include <cmath>

namespace brigade::client {
namespace {

template <typename T>
void AppendNumber(T value, std::string* out) {
  char buffer[32];
  const std::to_chars_result result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  out->append(buffer, result.ptr);
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

void AppendJsonString(std::string_view value, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  size_t run_start = 0;
  for (size_t i = 0; i < value.size(); ++i) {
    const auto c = static_cast<unsigned char>(value[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out->append(value.data() + run_start, i - run_start);
    run_start = i + 1;
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
      default:
        out->append("\\u00");
        out->push_back(kHex[c >> 4]);
        out->push_back(kHex[c & 0xf]);
    }
  }
  out->append(value.data() + run_start, value.size() - run_start);
  out->push_back('"');
}

void AppendJsonInt(int64_t value, std::string* out) { AppendNumber(value, out); }
void AppendJsonUint(uint64_t value, std::string* out) { AppendNumber(value, out); }
void AppendJsonDouble(double value, std::string* out) { AppendFloating(value, out); }
void AppendJsonFloat(float value, std::string* out) { AppendFloating(value, out); }

bool IsValidUtf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    int length = 0;
    uint32_t code_point = 0;
    if ((c & 0xe0) == 0xc0) {
      length = 2;
      code_point = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      length = 3;
      code_point = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      length = 4;
      code_point = c & 0x07;
    } else {
      return false;
    }
    if (i + length > text.size()) return false;
    for (int k = 1; k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xc0) != 0x80) return false;
      code_point = (code_point << 6) | (next & 0x3f);
    }
    static constexpr uint32_t kMinForLength[] = {0, 0, 0x80, 0x800, 0x10000};
    if (code_point < kMinForLength[length] || code_point > 0x10ffff ||
        (code_point >= 0xd800 && code_point <= 0xdfff)) {
      return false;
    }
    i += length;
  }
  return true;
}

}  // namespace brigade::client
