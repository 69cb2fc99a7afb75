#ifndef BRIGADE_SERVE_HTTP_JSON_WRITER_H_
#define BRIGADE_SERVE_HTTP_JSON_WRITER_H_

// JsonWriter: appends compact JSON to a std::string, with numbers formatted by std::to_chars
// (shortest round-trip form; FP32 values use float's shortest form, so 0.1f prints as 0.1).
//
// Commas are placed automatically; the caller is responsible for balanced Begin/End calls and for
// calling Key() before each value inside an object (checked only by tests, not at run time: this
// writer is on the response path of every request).
//
// Non-finite numbers have no JSON spelling; they are written as NaN, Infinity and -Infinity,
// which is what Triton writes and what Python's json module (tritonclient) reads back.
// String() escapes quotes, backslashes and control characters and copies other bytes verbatim:
// the caller must pass UTF-8 (IsValidUtf8 checks it).
//
// Thread safety: none (a value type bound to one string).

#include <cstdint>
#include <string>
#include <string_view>

namespace brigade::serve {

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

// True when `text` is well-formed UTF-8 (no overlong forms, surrogates or code points > U+10FFFF).
bool IsValidUtf8(std::string_view text);

}  // namespace brigade::serve

#endif  // BRIGADE_SERVE_HTTP_JSON_WRITER_H_
