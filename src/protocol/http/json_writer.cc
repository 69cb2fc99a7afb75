#include "protocol/http/json_writer.h"

#include <type_traits>
#include <variant>

#include "core/json_text.h"

namespace brigade::protocol::http {
namespace {

void WriteParameterValue(const ParameterValue& value, JsonWriter* writer) {
  std::visit(
      [writer](const auto& v) {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, bool>) {
          writer->Bool(v);
        } else if constexpr (std::is_same_v<V, int64_t>) {
          writer->Int(v);
        } else if constexpr (std::is_same_v<V, uint64_t>) {
          writer->Uint(v);
        } else if constexpr (std::is_same_v<V, double>) {
          writer->Double(v);
        } else {
          writer->String(v);
        }
      },
      value);
}

}  // namespace

void JsonWriter::Key(std::string_view key) {
  Separate();
  AppendJsonString(key, out_);
  out_->push_back(':');
  need_comma_ = false;
}

void WriteParameters(const Parameters& parameters, JsonWriter* writer) {
  writer->BeginObject();
  for (const auto& [key, value] : parameters.entries()) {
    writer->Key(key);
    WriteParameterValue(value, writer);
  }
  writer->EndObject();
}

void WriteParametersWith(const Parameters& parameters, std::string_view key,
                         const ParameterValue& value, JsonWriter* writer) {
  writer->BeginObject();
  for (const auto& [entry_key, entry_value] : parameters.entries()) {
    if (entry_key == key) continue;
    writer->Key(entry_key);
    WriteParameterValue(entry_value, writer);
  }
  if (!key.empty()) {
    writer->Key(key);
    WriteParameterValue(value, writer);
  }
  writer->EndObject();
}

}  // namespace brigade::protocol::http
