#include "protocol/http/model_config_json.h"

#include <algorithm>
#include <string_view>
#include <utility>
#include <vector>

#include "google/protobuf/descriptor.h"
#include "protocol/http/json_writer.h"

namespace brigade::protocol::http {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::EnumValueDescriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

std::string Base64(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const uint32_t n = (static_cast<uint8_t>(bytes[i]) << 16) |
                       (static_cast<uint8_t>(bytes[i + 1]) << 8) |
                       static_cast<uint8_t>(bytes[i + 2]);
    out += {kAlphabet[n >> 18], kAlphabet[(n >> 12) & 63], kAlphabet[(n >> 6) & 63],
            kAlphabet[n & 63]};
  }
  if (i < bytes.size()) {
    uint32_t n = static_cast<uint8_t>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) n |= static_cast<uint8_t>(bytes[i + 1]) << 8;
    out += kAlphabet[n >> 18];
    out += kAlphabet[(n >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(n >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

void WriteMessage(const Message& message, JsonWriter* writer);

void WriteEnum(const FieldDescriptor* field, int number, JsonWriter* writer) {
  const EnumValueDescriptor* value = field->enum_type()->FindValueByNumber(number);
  if (value != nullptr) {
    writer->String(value->name());
  } else {
    writer->Int(number);  // a value this build's schema does not know
  }
}

// One element of `field`: the singular value when index < 0, else element `index` of a repeated
// field.
void WriteValue(const Message& message, const FieldDescriptor* field, int index,
                JsonWriter* writer) {
  const Reflection* reflection = message.GetReflection();
  const bool repeated = index >= 0;
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      writer->Int(repeated ? reflection->GetRepeatedInt32(message, field, index)
                           : reflection->GetInt32(message, field));
      break;
    case FieldDescriptor::CPPTYPE_INT64:
      writer->Int(repeated ? reflection->GetRepeatedInt64(message, field, index)
                           : reflection->GetInt64(message, field));
      break;
    case FieldDescriptor::CPPTYPE_UINT32:
      writer->Uint(repeated ? reflection->GetRepeatedUInt32(message, field, index)
                            : reflection->GetUInt32(message, field));
      break;
    case FieldDescriptor::CPPTYPE_UINT64:
      writer->Uint(repeated ? reflection->GetRepeatedUInt64(message, field, index)
                            : reflection->GetUInt64(message, field));
      break;
    case FieldDescriptor::CPPTYPE_DOUBLE:
      writer->Double(repeated ? reflection->GetRepeatedDouble(message, field, index)
                              : reflection->GetDouble(message, field));
      break;
    case FieldDescriptor::CPPTYPE_FLOAT:
      writer->Float(repeated ? reflection->GetRepeatedFloat(message, field, index)
                             : reflection->GetFloat(message, field));
      break;
    case FieldDescriptor::CPPTYPE_BOOL:
      writer->Bool(repeated ? reflection->GetRepeatedBool(message, field, index)
                            : reflection->GetBool(message, field));
      break;
    case FieldDescriptor::CPPTYPE_ENUM:
      WriteEnum(field,
                repeated ? reflection->GetRepeatedEnumValue(message, field, index)
                         : reflection->GetEnumValue(message, field),
                writer);
      break;
    case FieldDescriptor::CPPTYPE_STRING: {
      const std::string text = repeated ? reflection->GetRepeatedString(message, field, index)
                                        : reflection->GetString(message, field);
      writer->String(field->type() == FieldDescriptor::TYPE_BYTES ? Base64(text) : text);
      break;
    }
    case FieldDescriptor::CPPTYPE_MESSAGE:
      WriteMessage(repeated ? reflection->GetRepeatedMessage(message, field, index)
                            : reflection->GetMessage(message, field),
                   writer);
      break;
  }
}

// A map key as JSON object keys spell it.
std::string MapKey(const Message& entry) {
  const FieldDescriptor* key = entry.GetDescriptor()->map_key();
  const Reflection* reflection = entry.GetReflection();
  switch (key->cpp_type()) {
    case FieldDescriptor::CPPTYPE_STRING:
      return reflection->GetString(entry, key);
    case FieldDescriptor::CPPTYPE_INT32:
      return std::to_string(reflection->GetInt32(entry, key));
    case FieldDescriptor::CPPTYPE_INT64:
      return std::to_string(reflection->GetInt64(entry, key));
    case FieldDescriptor::CPPTYPE_UINT32:
      return std::to_string(reflection->GetUInt32(entry, key));
    case FieldDescriptor::CPPTYPE_UINT64:
      return std::to_string(reflection->GetUInt64(entry, key));
    case FieldDescriptor::CPPTYPE_BOOL:
      return reflection->GetBool(entry, key) ? "true" : "false";
    default:
      return "";  // protobuf allows no other key types
  }
}

void WriteMap(const Message& message, const FieldDescriptor* field, JsonWriter* writer) {
  const Reflection* reflection = message.GetReflection();
  const int size = reflection->FieldSize(message, field);
  // Sorted by key: map order is unspecified in protobuf, and stable output diffs cleanly.
  std::vector<std::pair<std::string, const Message*>> entries;
  entries.reserve(size);
  for (int i = 0; i < size; ++i) {
    const Message& entry = reflection->GetRepeatedMessage(message, field, i);
    entries.emplace_back(MapKey(entry), &entry);
  }
  std::sort(entries.begin(), entries.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  writer->BeginObject();
  for (const auto& [key, entry] : entries) {
    writer->Key(key);
    WriteValue(*entry, entry->GetDescriptor()->map_value(), -1, writer);
  }
  writer->EndObject();
}

void WriteMessage(const Message& message, JsonWriter* writer) {
  const Descriptor* descriptor = message.GetDescriptor();
  const Reflection* reflection = message.GetReflection();
  writer->BeginObject();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const FieldDescriptor* field = descriptor->field(i);
    if (field->is_map()) {
      writer->Key(field->name());
      WriteMap(message, field, writer);
    } else if (field->is_repeated()) {
      writer->Key(field->name());
      writer->BeginArray();
      const int size = reflection->FieldSize(message, field);
      for (int j = 0; j < size; ++j) WriteValue(message, field, j, writer);
      writer->EndArray();
    } else {
      const bool presence_only = field->containing_oneof() != nullptr ||
                                 field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE;
      if (presence_only && !reflection->HasField(message, field)) continue;
      writer->Key(field->name());
      WriteValue(message, field, -1, writer);
    }
  }
  writer->EndObject();
}

}  // namespace

std::string EncodeModelConfig(const Message& config) {
  std::string json;
  JsonWriter writer(&json);
  WriteMessage(config, &writer);
  return json;
}

}  // namespace brigade::protocol::http
