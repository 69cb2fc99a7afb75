#include "protocol/http/log_settings_json.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "core/status_macros.h"
#include "core/strings.h"
#include "protocol/http/json_dom_reader.h"
#include "protocol/http/json_reader.h"
#include "protocol/http/json_writer.h"

namespace brigade::protocol::http {
namespace {

using simdjson::ondemand::field;
using simdjson::ondemand::object;
using simdjson::ondemand::value;

constexpr std::string_view kLogSettingsWhat = "log settings request";

absl::StatusOr<bool> Bool(value& item, std::string_view key) {
  return ReadBool(item, [&] { return StrCat(kLogSettingsWhat, ": '", key, "'"); });
}

}  // namespace

absl::StatusOr<protocol::LogSettingsUpdate> DecodeLogSettingsRequest(const BodyBuffer& body) {
  protocol::LogSettingsUpdate update;
  const std::string_view text = body.view();
  if (std::all_of(text.begin(), text.end(),
                  [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; })) {
    return update;
  }
  JsonDocument document(body, body.size());
  BRIGADE_ASSIGN_OR_RETURN(object root, document.RootObject(kLogSettingsWhat));
  for (auto field_result : root) {
    field entry;
    if (auto error = std::move(field_result).get(entry)) return JsonError(kLogSettingsWhat, error);
    std::string_view key;
    if (auto error = entry.unescaped_key().get(key)) return JsonError(kLogSettingsWhat, error);
    if (key == "log_file" || key == "log_format") {
      BRIGADE_ASSIGN_OR_RETURN(std::string_view text, ReadString(entry.value(), [&] {
                                 return StrCat(kLogSettingsWhat, ": '", key, "'");
                               }));
      (key == "log_file" ? update.log_file : update.log_format) = std::string(text);
    } else if (key == "log_info") {
      BRIGADE_ASSIGN_OR_RETURN(update.log_info, Bool(entry.value(), key));
    } else if (key == "log_warning") {
      BRIGADE_ASSIGN_OR_RETURN(update.log_warning, Bool(entry.value(), key));
    } else if (key == "log_error") {
      BRIGADE_ASSIGN_OR_RETURN(update.log_error, Bool(entry.value(), key));
    } else if (key == "log_verbose_level") {
      uint64_t level = 0;
      if (entry.value().get_uint64().get(level) != simdjson::SUCCESS ||
          level > std::numeric_limits<uint32_t>::max()) {
        return absl::InvalidArgumentError(StrCat(
            kLogSettingsWhat, ": 'log_verbose_level' must be an integer in [0, 4294967295], got ",
            TokenText(entry.value())));
      }
      update.log_verbose_level = static_cast<uint32_t>(level);
    } else {
      return absl::InvalidArgumentError(
          StrCat(kLogSettingsWhat, " has an unknown field '", key, "'"));
    }
  }
  BRIGADE_RETURN_IF_ERROR(document.FinishDocument(kLogSettingsWhat));
  return update;
}

std::string EncodeLogSettings(const protocol::LogSettings& settings) {
  std::string json;
  JsonWriter writer(&json);
  writer.BeginObject();
  writer.Key("log_file");
  writer.String(settings.log_file);
  writer.Key("log_info");
  writer.Bool(settings.log_info);
  writer.Key("log_warning");
  writer.Bool(settings.log_warning);
  writer.Key("log_error");
  writer.Bool(settings.log_error);
  writer.Key("log_verbose_level");
  writer.Int(settings.log_verbose_level);
  writer.Key("log_format");
  writer.String(settings.log_format);
  writer.EndObject();
  return json;
}

}  // namespace brigade::protocol::http
