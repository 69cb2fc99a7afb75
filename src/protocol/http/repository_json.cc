#include "protocol/http/repository_json.h"

#include <algorithm>

#include "core/json_text.h"
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

bool IsBlank(const BodyBuffer& body) {
  const std::string_view text = body.view();
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; });
}

// Calls `on_parameter(key, value)` for each entry of the body's `parameters` object, refusing any
// other top-level field.
template <typename OnParameter>
absl::Status ForEachParameter(const BodyBuffer& body, std::string_view what,
                              OnParameter on_parameter) {
  if (IsBlank(body)) return absl::OkStatus();
  JsonDocument document(body, body.size());
  BRIGADE_ASSIGN_OR_RETURN(object root, document.RootObject(what));
  for (auto field_result : root) {
    field entry;
    if (auto error = std::move(field_result).get(entry)) return JsonError(what, error);
    if (entry.key() != "parameters") return UnknownField(what, entry);
    object parameters;
    if (entry.value().get_object().get(parameters) != simdjson::SUCCESS) {
      return absl::InvalidArgumentError(StrCat(what, ": 'parameters' must be a JSON object"));
    }
    for (auto parameter_result : parameters) {
      field parameter;
      if (auto error = std::move(parameter_result).get(parameter)) return JsonError(what, error);
      std::string_view key;
      if (auto error = parameter.unescaped_key().get(key)) return JsonError(what, error);
      BRIGADE_RETURN_IF_ERROR(on_parameter(std::string(key), parameter.value()));
    }
  }
  return document.FinishDocument(what);
}

// Brigade unloads exactly the model named: with `true`, the models an ensemble brought in would
// stay loaded, so the request is refused rather than half done.
absl::Status UnloadDependentsUnsupported() {
  return absl::UnimplementedError(
      "unload parameter 'unload_dependents': unloading the models an ensemble uses along with it "
      "is not supported; unload each model by name");
}

}  // namespace

absl::StatusOr<bool> DecodeRepositoryIndexRequest(const BodyBuffer& body) {
  constexpr std::string_view kWhat = "repository index request";
  if (IsBlank(body)) return false;
  JsonDocument document(body, body.size());
  BRIGADE_ASSIGN_OR_RETURN(object root, document.RootObject(kWhat));
  bool ready = false;
  for (auto field_result : root) {
    field entry;
    if (auto error = std::move(field_result).get(entry)) return JsonError(kWhat, error);
    if (entry.key() != "ready") return UnknownField(kWhat, entry);
    BRIGADE_ASSIGN_OR_RETURN(ready, ReadBool(entry.value(), [] { return std::string("'ready'"); }));
  }
  BRIGADE_RETURN_IF_ERROR(document.FinishDocument(kWhat));
  return ready;
}

absl::StatusOr<CacheInvalidateRequest> DecodeCacheInvalidateRequest(const BodyBuffer& body) {
  constexpr std::string_view kWhat = "cache invalidation request";
  CacheInvalidateRequest request;
  if (IsBlank(body)) return request;
  JsonDocument document(body, body.size());
  BRIGADE_ASSIGN_OR_RETURN(object root, document.RootObject(kWhat));
  std::string version;
  for (auto field_result : root) {
    field entry;
    if (auto error = std::move(field_result).get(entry)) return JsonError(kWhat, error);
    if (entry.key() == "model_name") {
      BRIGADE_ASSIGN_OR_RETURN(std::string_view name, ReadString(entry.value(), [] {
                                 return std::string("'model_name'");
                               }));
      request.model_name = std::string(name);
    } else if (entry.key() == "model_version") {
      BRIGADE_ASSIGN_OR_RETURN(std::string_view text, ReadString(entry.value(), [] {
                                 return std::string("'model_version'");
                               }));
      version = std::string(text);
    } else {
      return UnknownField(kWhat, entry);
    }
  }
  BRIGADE_RETURN_IF_ERROR(document.FinishDocument(kWhat));
  if (!version.empty()) {
    if (!ParseInteger(version, &request.model_version) || request.model_version < 0) {
      return absl::InvalidArgumentError(
          StrCat(kWhat, ": 'model_version' must be a non-negative integer, got '", version, "'"));
    }
    if (request.model_name.empty()) {
      return absl::InvalidArgumentError(StrCat(kWhat, ": 'model_version' needs 'model_name'"));
    }
  }
  return request;
}

absl::StatusOr<protocol::LoadModelRequest> DecodeLoadModelRequest(std::string_view model_name,
                                                                  const BodyBuffer& body) {
  protocol::LoadModelRequest request;
  request.name = std::string(model_name);
  BRIGADE_RETURN_IF_ERROR(ForEachParameter(
      body, "load request", [&request](const std::string& key, value& item) -> absl::Status {
        if (key == "config") {
          BRIGADE_ASSIGN_OR_RETURN(std::string_view config, ReadString(item, [] {
                                     return std::string("load parameter 'config'");
                                   }));
          request.config_json = std::string(config);
          return absl::OkStatus();
        }
        if (key.starts_with("file:")) {
          return absl::UnimplementedError(StrCat("load parameter '", key,
                                                 "': model files in the request are not "
                                                 "supported; place them in the repository"));
        }
        return absl::InvalidArgumentError(StrCat("unknown load parameter '", key, "'"));
      }));
  return request;
}

absl::Status DecodeUnloadModelRequest(const BodyBuffer& body) {
  return ForEachParameter(
      body, "unload request", [](const std::string& key, value& item) -> absl::Status {
        if (key == "unload_dependents") {
          BRIGADE_ASSIGN_OR_RETURN(bool dependents, ReadBool(item, [] {
                                     return std::string("unload parameter 'unload_dependents'");
                                   }));
          if (dependents) return UnloadDependentsUnsupported();
          return absl::OkStatus();
        }
        return absl::InvalidArgumentError(StrCat("unknown unload parameter '", key, "'"));
      });
}

std::string EncodeRepositoryIndex(std::span<const protocol::RepositoryIndexEntry> entries) {
  std::string json;
  JsonWriter writer(&json);
  writer.BeginArray();
  for (const protocol::RepositoryIndexEntry& entry : entries) {
    writer.BeginObject();
    writer.Key("name");
    writer.String(entry.name);
    if (!entry.version.empty()) {
      writer.Key("version");
      writer.String(entry.version);
    }
    writer.Key("state");
    writer.String(entry.state);
    if (!entry.reason.empty()) {
      writer.Key("reason");
      writer.String(entry.reason);
    }
    writer.EndObject();
  }
  writer.EndArray();
  return json;
}

// The client's half: the index read back, and the request bodies written.
absl::StatusOr<std::vector<protocol::RepositoryIndexEntry>> DecodeRepositoryIndex(
    simdjson::dom::parser& parser, std::string_view json) {
  constexpr std::string_view kWhat = "repository index";
  BRIGADE_ASSIGN_OR_RETURN(simdjson::dom::element root, ParseJson(parser, json, kWhat));
  simdjson::dom::array items;
  if (root.get(items) != simdjson::SUCCESS) {
    return MalformedResponse(kWhat, "the body is not a JSON array");
  }
  std::vector<protocol::RepositoryIndexEntry> result;
  for (simdjson::dom::element item : items) {
    simdjson::dom::object entry;
    if (item.get(entry) != simdjson::SUCCESS) {
      return MalformedResponse(kWhat, "an entry is not an object");
    }
    protocol::RepositoryIndexEntry& model = result.emplace_back();
    BRIGADE_ASSIGN_OR_RETURN(std::string_view name, RequiredString(entry, "name", kWhat));
    model.name.assign(name);
    BRIGADE_ASSIGN_OR_RETURN(std::string_view version, OptionalString(entry, "version", kWhat));
    model.version.assign(version);
    BRIGADE_ASSIGN_OR_RETURN(std::string_view state, OptionalString(entry, "state", kWhat));
    model.state.assign(state);
    BRIGADE_ASSIGN_OR_RETURN(std::string_view reason, OptionalString(entry, "reason", kWhat));
    model.reason.assign(reason);
  }
  return result;
}

std::string EncodeRepositoryIndexRequest(bool ready_only) {
  return ready_only ? "{\"ready\":true}" : "{}";
}

std::string EncodeLoadRequest(std::string_view config_json) {
  if (config_json.empty()) return "{}";
  std::string json = "{\"parameters\":{\"config\":";
  AppendJsonString(config_json, &json);
  json.append("}}");
  return json;
}

}  // namespace brigade::protocol::http
