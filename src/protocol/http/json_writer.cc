#include "protocol/http/json_writer.h"

#include "core/json_text.h"

namespace brigade::protocol::http {

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
  AppendJsonString(key, out_);
  out_->push_back(':');
  need_comma_ = false;
}

void JsonWriter::String(std::string_view value) {
  Separate();
  AppendJsonString(value, out_);
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
  AppendJsonInt(value, out_);
}

void JsonWriter::Uint(uint64_t value) {
  Separate();
  AppendJsonUint(value, out_);
}

void JsonWriter::Double(double value) {
  Separate();
  AppendJsonDouble(value, out_);
}

void JsonWriter::Float(float value) {
  Separate();
  AppendJsonFloat(value, out_);
}

void JsonWriter::Raw(std::string_view json) {
  Separate();
  out_->append(json);
}

}  // namespace brigade::protocol::http
