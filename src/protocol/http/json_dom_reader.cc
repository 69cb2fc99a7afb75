#include "protocol/http/json_dom_reader.h"

#include <string>

#include "core/status_macros.h"
#include "core/strings.h"

namespace brigade::protocol::http {

static_assert(kJsonPaddingBytes >= simdjson::SIMDJSON_PADDING,
              "the padding a decoder asks for must cover simdjson's");

absl::Status MalformedResponse(std::string_view what, std::string_view detail) {
  return absl::InternalError(StrCat("malformed ", what, " response: ", detail));
}

absl::StatusOr<simdjson::dom::element> ParseJson(simdjson::dom::parser& parser,
                                                 std::string_view json, std::string_view what) {
  simdjson::dom::element root;
  const simdjson::error_code error =
      parser.parse(json.data(), json.size(), /*realloc_if_needed=*/false).get(root);
  if (error != simdjson::SUCCESS) {
    return MalformedResponse(what, simdjson::error_message(error));
  }
  return root;
}

absl::StatusOr<simdjson::dom::object> ParseJsonObject(simdjson::dom::parser& parser,
                                                      std::string_view json,
                                                      std::string_view what) {
  BRIGADE_ASSIGN_OR_RETURN(simdjson::dom::element root, ParseJson(parser, json, what));
  simdjson::dom::object object;
  if (root.get(object) != simdjson::SUCCESS) {
    return MalformedResponse(what, "the body is not a JSON object");
  }
  return object;
}

absl::StatusOr<std::string_view> RequiredString(simdjson::dom::object object, std::string_view key,
                                                std::string_view what) {
  std::string_view value;
  if (object[key].get(value) != simdjson::SUCCESS) {
    return MalformedResponse(what, StrCat("'", key, "' is missing or not a string"));
  }
  return value;
}

absl::StatusOr<std::string_view> OptionalString(simdjson::dom::object object, std::string_view key,
                                                std::string_view what) {
  simdjson::dom::element element;
  if (object[key].get(element) != simdjson::SUCCESS) return std::string_view();
  std::string_view value;
  if (element.get(value) != simdjson::SUCCESS) {
    return MalformedResponse(what, StrCat("'", key, "' is not a string"));
  }
  return value;
}

absl::StatusOr<uint64_t> OptionalUint(simdjson::dom::object object, std::string_view key,
                                      std::string_view what) {
  simdjson::dom::element element;
  if (object[key].get(element) != simdjson::SUCCESS) return uint64_t{0};
  uint64_t value = 0;
  if (element.get(value) == simdjson::SUCCESS) return value;
  std::string_view text;
  if (element.get(text) == simdjson::SUCCESS && ParseInteger(text, &value)) return value;
  return MalformedResponse(what, StrCat("'", key, "' is not an unsigned integer"));
}

absl::StatusOr<Shape> ReadShape(simdjson::dom::element value, std::string_view what) {
  simdjson::dom::array dims;
  if (value.get(dims) != simdjson::SUCCESS) {
    return MalformedResponse(what, "'shape' is not an array");
  }
  Shape shape;
  for (simdjson::dom::element dim : dims) {
    int64_t size = 0;
    if (dim.get(size) != simdjson::SUCCESS) {
      return MalformedResponse(what, "'shape' holds a non-integer");
    }
    shape.push_back(size);
  }
  return shape;
}

absl::Status ReadParameters(simdjson::dom::element value, std::string_view what, Parameters* out) {
  simdjson::dom::object object;
  if (value.get(object) != simdjson::SUCCESS) {
    return MalformedResponse(what, "'parameters' is not an object");
  }
  for (simdjson::dom::key_value_pair entry : object) {
    std::string key(entry.key);
    simdjson::dom::element item = entry.value;
    switch (item.type()) {
      case simdjson::dom::element_type::BOOL:
        out->Set(std::move(key), bool{item.get_bool().value_unsafe()});
        break;
      case simdjson::dom::element_type::INT64:
        out->Set(std::move(key), int64_t{item.get_int64().value_unsafe()});
        break;
      case simdjson::dom::element_type::UINT64:
        out->Set(std::move(key), uint64_t{item.get_uint64().value_unsafe()});
        break;
      case simdjson::dom::element_type::DOUBLE:
        out->Set(std::move(key), double{item.get_double().value_unsafe()});
        break;
      case simdjson::dom::element_type::STRING:
        out->Set(std::move(key), std::string(item.get_string().value_unsafe()));
        break;
      default:
        return MalformedResponse(what, StrCat("parameter '", entry.key, "' has no scalar value"));
    }
  }
  return absl::OkStatus();
}

}  // namespace brigade::protocol::http
