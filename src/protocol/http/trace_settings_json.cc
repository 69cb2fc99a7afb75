#include "protocol/http/trace_settings_json.h"

#include <algorithm>
#include <vector>

#include "core/status_macros.h"
#include "core/strings.h"
#include "protocol/http/json_reader.h"
#include "protocol/http/json_writer.h"

namespace brigade::protocol::http {
namespace {

using simdjson::ondemand::array;
using simdjson::ondemand::field;
using simdjson::ondemand::json_type;
using simdjson::ondemand::object;
using simdjson::ondemand::value;

constexpr std::string_view kTraceSettingsWhat = "trace settings request";

absl::Status NotStrings(std::string_view key, value& item) {
  return absl::InvalidArgumentError(StrCat(kTraceSettingsWhat, ": '", key,
                                           "' must be a string, an array of strings or null, got ",
                                           TokenText(item)));
}

}  // namespace

absl::StatusOr<protocol::TraceSettingsUpdate> DecodeTraceSettingsRequest(const BodyBuffer& body) {
  protocol::TraceSettingsUpdate update;
  const std::string_view text = body.view();
  if (std::all_of(text.begin(), text.end(),
                  [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; })) {
    return update;
  }
  JsonDocument document(body, body.size());
  BRIGADE_ASSIGN_OR_RETURN(object root, document.RootObject(kTraceSettingsWhat));
  for (auto field_result : root) {
    field entry;
    if (auto error = std::move(field_result).get(entry))
      return JsonError(kTraceSettingsWhat, error);
    std::string_view key;
    if (auto error = entry.unescaped_key().get(key)) return JsonError(kTraceSettingsWhat, error);
    protocol::TraceSettingChange change{std::string(key), std::nullopt};
    value item = entry.value();
    json_type type;
    if (auto error = item.type().get(type)) return JsonError(kTraceSettingsWhat, error);
    if (type == json_type::string) {
      BRIGADE_ASSIGN_OR_RETURN(std::string_view one, ReadString(item, [&] {
                                 return StrCat(kTraceSettingsWhat, ": '", key, "'");
                               }));
      change.value = std::vector<std::string>{std::string(one)};
    } else if (type == json_type::array) {
      array elements;
      if (auto error = item.get_array().get(elements)) return JsonError(kTraceSettingsWhat, error);
      change.value.emplace();
      for (auto element_result : elements) {
        value element;
        if (auto error = element_result.get(element)) return JsonError(kTraceSettingsWhat, error);
        std::string_view one;
        if (element.get_string().get(one) != simdjson::SUCCESS) return NotStrings(key, element);
        change.value->emplace_back(one);
      }
    } else if (type == json_type::null) {
      bool is_null = false;
      if (auto error = item.is_null().get(is_null)) return JsonError(kTraceSettingsWhat, error);
    } else {
      return NotStrings(key, item);
    }
    update.push_back(std::move(change));
  }
  BRIGADE_RETURN_IF_ERROR(document.FinishDocument(kTraceSettingsWhat));
  return update;
}

std::string EncodeTraceSettings(const protocol::TraceSettings& settings) {
  std::string json;
  JsonWriter writer(&json);
  writer.BeginObject();
  for (const auto& [key, values] : settings) {
    writer.Key(key);
    if (key != "trace_level" && values.size() == 1) {
      writer.String(values.front());
      continue;
    }
    writer.BeginArray();
    for (const std::string& one : values) writer.String(one);
    writer.EndArray();
  }
  writer.EndObject();
  return json;
}

}  // namespace brigade::protocol::http
