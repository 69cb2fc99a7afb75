#include "protocol/http/json_reader.h"

#include <algorithm>

#include "core/strings.h"

namespace brigade::protocol::http {
namespace {

using simdjson::ondemand::json_type;
using simdjson::ondemand::number_type;

// Parsers keep their working memory (several bytes per input byte) between documents; reuse one
// per thread for ordinary requests, but give large documents a parser of their own so one big
// request does not pin its memory to an io thread for the life of the process.
constexpr size_t kReusableParserBytes = size_t{1} << 20;

simdjson::ondemand::parser& ThreadParser() {
  thread_local simdjson::ondemand::parser parser;
  return parser;
}

}  // namespace

JsonDocument::JsonDocument(const BodyBuffer& body, size_t json_bytes) : json_bytes_(json_bytes) {
  if (json_bytes > kReusableParserBytes) {
    own_parser_ = std::make_unique<simdjson::ondemand::parser>();
    parser_ = own_parser_.get();
  } else {
    parser_ = &ThreadParser();
  }
  if (json_bytes == body.size()) {
    // In place: the buffer's zeroed padding follows the JSON.
    open_error_ = parser_
                      ->iterate(reinterpret_cast<const char*>(body.data()), json_bytes,
                                json_bytes + BodyBuffer::kPaddingBytes)
                      .get(document_);
    return;
  }
  // The binary section follows the JSON header, and its bytes are not padding: On-Demand reads
  // the byte after the document when it decides whether a container goes on, so after an
  // unclosed header a ',' there sent it past the end of its index. Parse a copy of the header
  // followed by zeroed padding instead (the header is small; the tensors stay where they are).
  header_copy_ = simdjson::padded_string(reinterpret_cast<const char*>(body.data()), json_bytes);
  open_error_ = parser_->iterate(header_copy_).get(document_);
}

JsonDocument::~JsonDocument() = default;

absl::StatusOr<simdjson::ondemand::object> JsonDocument::RootObject(std::string_view what) {
  if (open_error_ == simdjson::EMPTY) {
    return absl::InvalidArgumentError(StrCat(what, " is empty; expected a JSON object"));
  }
  if (open_error_ != simdjson::SUCCESS) return JsonError(what, open_error_);
  json_type type;
  if (auto error = document_.type().get(type)) return JsonError(what, error);
  if (type != json_type::object) {
    return absl::InvalidArgumentError(StrCat(what, " must be a JSON object"));
  }
  simdjson::ondemand::object object;
  if (auto error = document_.get_object().get(object)) return JsonError(what, error);
  return object;
}

absl::Status JsonDocument::FinishDocument(std::string_view what) {
  // current_location() is out of bounds exactly when the whole input has been consumed.
  const simdjson::error_code error = document_.current_location().error();
  if (error == simdjson::OUT_OF_BOUNDS) return absl::OkStatus();
  if (error != simdjson::SUCCESS) return JsonError(what, error);
  return absl::InvalidArgumentError(
      StrCat("malformed JSON in ", what, ": unexpected content after the top-level object"));
}

absl::Status JsonError(std::string_view where, simdjson::error_code error) {
  return absl::InvalidArgumentError(
      StrCat("malformed JSON in ", where, ": ", simdjson::error_message(error)));
}

std::string TokenText(simdjson::ondemand::value& value) {
  std::string_view token = value.raw_json_token();
  while (!token.empty() && (token.back() == ' ' || token.back() == '\n' || token.back() == '\r' ||
                            token.back() == '\t' || token.back() == ',')) {
    token.remove_suffix(1);
  }
  constexpr size_t kMaxShown = 40;
  if (token.size() > kMaxShown) return StrCat(token.substr(0, kMaxShown), "...");
  return std::string(token);
}

absl::StatusOr<std::string_view> ReadString(simdjson::ondemand::value& value, LazyText where) {
  std::string_view text;
  if (value.get_string().get(text) != simdjson::SUCCESS) {
    return absl::InvalidArgumentError(StrCat(where(), " must be a string, got ", TokenText(value)));
  }
  return text;
}

absl::StatusOr<bool> ReadBool(simdjson::ondemand::value& value, LazyText where) {
  bool flag;
  if (value.get_bool().get(flag) != simdjson::SUCCESS) {
    return absl::InvalidArgumentError(
        StrCat(where(), " must be true or false, got ", TokenText(value)));
  }
  return flag;
}

absl::Status UnknownField(std::string_view where, simdjson::ondemand::field& entry) {
  std::string_view key;
  if (entry.unescaped_key().get(key) != simdjson::SUCCESS) key = "?";
  return absl::InvalidArgumentError(StrCat(where, " has an unknown field '", key, "'"));
}

absl::Status ReadParameters(simdjson::ondemand::value& value, LazyText where, Parameters* out) {
  simdjson::ondemand::object object;
  if (value.get_object().get(object) != simdjson::SUCCESS) {
    return absl::InvalidArgumentError(
        StrCat(where(), " must be a JSON object, got ", TokenText(value)));
  }
  for (auto field_result : object) {
    simdjson::ondemand::field field;
    if (auto error = std::move(field_result).get(field)) return JsonError(where(), error);
    std::string_view key;
    if (auto error = field.unescaped_key().get(key)) return JsonError(where(), error);
    std::string key_copy(key);
    if (out->Contains(key_copy)) {
      return absl::InvalidArgumentError(StrCat(where(), " has '", key_copy, "' twice"));
    }
    simdjson::ondemand::value& item = field.value();
    json_type type;
    if (auto error = item.type().get(type)) return JsonError(where(), error);
    switch (type) {
      case json_type::boolean: {
        bool flag;
        if (auto error = item.get_bool().get(flag)) return JsonError(where(), error);
        out->Set(std::move(key_copy), flag);
        break;
      }
      case json_type::string: {
        std::string_view text;
        if (auto error = item.get_string().get(text)) return JsonError(where(), error);
        out->Set(std::move(key_copy), std::string(text));
        break;
      }
      case json_type::number: {
        number_type kind;
        if (item.get_number_type().get(kind) != simdjson::SUCCESS) {
          return absl::InvalidArgumentError(
              StrCat(where(), " '", key_copy, "': ", TokenText(item), " is not a valid number"));
        }
        if (kind == number_type::signed_integer) {
          int64_t number;
          if (auto error = item.get_int64().get(number)) return JsonError(where(), error);
          out->Set(std::move(key_copy), number);
        } else if (kind == number_type::unsigned_integer) {
          uint64_t number;
          if (auto error = item.get_uint64().get(number)) return JsonError(where(), error);
          out->Set(std::move(key_copy), number);
        } else {
          double number;
          if (item.get_double().get(number) != simdjson::SUCCESS) {
            return absl::InvalidArgumentError(
                StrCat(where(), " '", key_copy, "': ", TokenText(item), " is not a valid number"));
          }
          out->Set(std::move(key_copy), number);
        }
        break;
      }
      default:
        return absl::InvalidArgumentError(StrCat(
            where(), " '", key_copy, "' must be a bool, number or string, got ", TokenText(item)));
    }
  }
  return absl::OkStatus();
}

}  // namespace brigade::protocol::http
