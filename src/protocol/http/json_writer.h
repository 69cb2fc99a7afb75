#ifndef BRIGADE_PROTOCOL_HTTP_JSON_WRITER_H_
#define BRIGADE_PROTOCOL_HTTP_JSON_WRITER_H_

// JsonWriter: appends compact JSON to a std::string, placing the commas and colons itself.
// Strings and numbers are written by core/json_text.h (its contract says how: escapes, shortest
// round-trip numbers, FP32 in float's shortest form so 0.1f prints as 0.1, and non-finite numbers
// as NaN, Infinity and -Infinity, which is what Triton writes and what Python's json module
// (tritonclient) reads back). String() copies non-ASCII bytes verbatim: the caller must pass
// UTF-8 (IsValidUtf8 in core/json_text.h checks it).
//
// The caller is responsible for balanced Begin/End calls and for calling Key() before each value
// inside an object (checked only by tests, not at run time: this writer is on the response path of
// every request).
//
// Also here: the protocol's `parameters` objects, the one structured value every body carries
// (the reading side is ReadParameters in json_reader.h and json_dom_reader.h).
//
// Thread safety: none (a value type bound to one string).

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/json_text.h"
#include "core/parameters.h"

namespace brigade::protocol::http {

class JsonWriter {
 public:
  // `out` is borrowed for the writer's lifetime; output is appended to what it holds.
  explicit JsonWriter(std::string* out) : out_(out) {}

  void BeginObject();
  void EndObject();
  void BeginArray();
  void EndArray();
  void Key(std::string_view key);
  // Key() for a field name fixed in the source ("model_name"): appended as is, without the
  // escaping scan, so the fixed fields of a body on the request path cost no more than the raw
  // appends they replace. FieldName checks at compile time that the name needs no escaping.
  class FieldName {
   public:
    template <size_t N>
    consteval FieldName(const char (&name)[N])  // NOLINT: implicit, to take a literal
        : name_(name, N - 1) {
      for (const char c : name_) {
        if (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20) {
          throw "a field name that needs escaping must be written with Key()";
        }
      }
    }
    std::string_view view() const { return name_; }

   private:
    std::string_view name_;
  };
  void Field(FieldName name) {
    Separate();
    out_->push_back('"');
    out_->append(name.view());
    out_->append("\":", 2);
    need_comma_ = false;
  }

  void String(std::string_view value);
  void Bool(bool value);
  void Null();
  void Int(int64_t value);
  void Uint(uint64_t value);
  // Non-finite values as the bare words NaN / Infinity / -Infinity (the default), or, after
  // set_non_finite_as_strings(true), as the strings "NaN", "Infinity", "-Infinity" (the
  // convention of protobuf's JSON mapping), which strict JSON parsers read.
  void Double(double value);
  void Float(float value);
  void set_non_finite_as_strings(bool strings) { non_finite_as_strings_ = strings; }

  // Appends already-serialized JSON as one value (e.g. a nested document).
  void Raw(std::string_view json);

 private:
  void Separate() {
    if (need_comma_) out_->push_back(',');
    need_comma_ = true;
  }

  std::string* out_;
  bool need_comma_ = false;
  bool non_finite_as_strings_ = false;
};

// Inline: the writer is on the response path of every request, one call per JSON token.
inline void JsonWriter::BeginObject() {
  Separate();
  out_->push_back('{');
  need_comma_ = false;
}

inline void JsonWriter::EndObject() {
  out_->push_back('}');
  need_comma_ = true;
}

inline void JsonWriter::BeginArray() {
  Separate();
  out_->push_back('[');
  need_comma_ = false;
}

inline void JsonWriter::EndArray() {
  out_->push_back(']');
  need_comma_ = true;
}

inline void JsonWriter::String(std::string_view value) {
  Separate();
  AppendJsonString(value, out_);
}

inline void JsonWriter::Bool(bool value) {
  Separate();
  out_->append(value ? "true" : "false");
}

inline void JsonWriter::Null() {
  Separate();
  out_->append("null");
}

inline void JsonWriter::Int(int64_t value) {
  Separate();
  AppendJsonInt(value, out_);
}

inline void JsonWriter::Uint(uint64_t value) {
  Separate();
  AppendJsonUint(value, out_);
}

inline void JsonWriter::Double(double value) {
  Separate();
  if (non_finite_as_strings_ && !std::isfinite(value)) [[unlikely]] {
    out_->push_back('"');
    AppendJsonDouble(value, out_);
    out_->push_back('"');
    return;
  }
  AppendJsonDouble(value, out_);
}

inline void JsonWriter::Float(float value) {
  Separate();
  if (non_finite_as_strings_ && !std::isfinite(value)) [[unlikely]] {
    out_->push_back('"');
    AppendJsonFloat(value, out_);
    out_->push_back('"');
    return;
  }
  AppendJsonFloat(value, out_);
}

inline void JsonWriter::Raw(std::string_view json) {
  Separate();
  out_->append(json);
}

// Writes `parameters` as a JSON object.
void WriteParameters(const Parameters& parameters, JsonWriter* writer);

// Writes `parameters` as a JSON object in which the codec's own entry `key`: `value` replaces any
// entry of that name (binary_data_size, binary_data, binary_data_output are the codec's to set).
// An empty `key` adds nothing, and entries named like `key` are left out either way, so an entry
// with an empty name is never written this way.
void WriteParametersWith(const Parameters& parameters, std::string_view key,
                         const ParameterValue& value, JsonWriter* writer);

}  // namespace brigade::protocol::http

#endif  // BRIGADE_PROTOCOL_HTTP_JSON_WRITER_H_
