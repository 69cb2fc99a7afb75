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
// Thread safety: none (a value type bound to one string).

#include <cstdint>
#include <string>
#include <string_view>

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

  void String(std::string_view value);
  void Bool(bool value);
  void Null();
  void Int(int64_t value);
  void Uint(uint64_t value);
  void Double(double value);
  void Float(float value);

  // Appends already-serialized JSON as one value (e.g. a nested document).
  void Raw(std::string_view json);

 private:
  void Separate() {
    if (need_comma_) out_->push_back(',');
    need_comma_ = true;
  }

  std::string* out_;
  bool need_comma_ = false;
};

}  // namespace brigade::protocol::http

#endif  // BRIGADE_PROTOCOL_HTTP_JSON_WRITER_H_
