#include "serve/http/json_writer.h"

#include <array>
#include <charconv>
#include <cmath>

namespace brigade::serve {
namespace {

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

// True for the bytes a JSON string cannot hold literally: control characters, '"' and '\\'.
constexpr std::array<bool, 256> MakeEscapeTable() {
  std::array<bool, 256> table{};
  for (int c = 0; c < 0x20; ++c) table[c] = true;
  table['"'] = true;
  table['\\'] = true;
  return table;
}
constexpr std::array<bool, 256> kNeedsEscape = MakeEscapeTable();

void AppendEscaped(std::string_view text, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  const size_t size = text.size();
  size_t run_start = 0;
  size_t i = 0;
  for (;;) {
    // Copy the longest run that needs no escaping in one append.
    while (i < size && !kNeedsEscape[static_cast<unsigned char>(text[i])]) ++i;
    out->append(text.data() + run_start, i - run_start);
    if (i == size) break;
    const auto c = static_cast<unsigned char>(text[i]);
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
    run_start = ++i;
  }
  out->push_back('"');
}

}  // namespace

void JsonWriter::BeginObject() {
  Separate();
  out_->push_back('{');
  need_comma_ = false;
}

void JsonWriter::EndObject() {
  out_->push_back('}');
  need_comma_ = true;
}

void JsonWriter::BeginArray() {
  Separate();
  out_->push_back('[');
  need_comma_ = false;
}

void JsonWriter::EndArray() {
  out_->push_back(']');
  need_comma_ = true;
}

void JsonWriter::Key(std::string_view key) {
  Separate();
  AppendEscaped(key, out_);
  out_->push_back(':');
  need_comma_ = false;
}

void JsonWriter::String(std::string_view value) {
  Separate();
  AppendEscaped(value, out_);
}

void JsonWriter::Bool(bool value) {
  Separate();
  out_->append(value ? "true" : "false");
}

void JsonWriter::Null() {
  Separate();
  out_->append("null");
}

void JsonWriter::Int(int64_t value) {
  Separate();
  AppendNumber(value, out_);
}

void JsonWriter::Uint(uint64_t value) {
  Separate();
  AppendNumber(value, out_);
}

void JsonWriter::Double(double value) {
  Separate();
  AppendFloating(value, out_);
}

void JsonWriter::Float(float value) {
  Separate();
  AppendFloating(value, out_);
}

void JsonWriter::Raw(std::string_view json) {
  Separate();
  out_->append(json);
}

bool IsValidUtf8(std::string_view text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const auto* end = p + text.size();
  while (p < end) {
    const unsigned char c = *p;
    if (c < 0x80) {
      ++p;
      continue;
    }
    int extra;
    uint32_t code;
    uint32_t min_code;
    if ((c & 0xE0) == 0xC0) {
      extra = 1, code = c & 0x1F, min_code = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      extra = 2, code = c & 0x0F, min_code = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      extra = 3, code = c & 0x07, min_code = 0x10000;
    } else {
      return false;
    }
    if (end - p <= extra) return false;
    for (int i = 1; i <= extra; ++i) {
      if ((p[i] & 0xC0) != 0x80) return false;
      code = (code << 6) | (p[i] & 0x3F);
    }
    if (code < min_code || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return false;
    p += extra + 1;
  }
  return true;
}

}  // namespace brigade::serve
