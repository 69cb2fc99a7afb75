#ifndef BRIGADE_PROTOCOL_HTTP_JSON_READER_H_
#define BRIGADE_PROTOCOL_HTTP_JSON_READER_H_

// Shared pieces of the codec's JSON reading on simdjson On-Demand: a parser per thread, error
// messages that name the field at fault, the document-level checks On-Demand leaves to its user
// (trailing content), and the protocol's `parameters` objects.
//
// This is the server's side: the request decoders of this folder. The client's, reading
// responses, is json_dom_reader.h. On-Demand parses while it is iterated and validates only what
// is visited, so every request decoder here consumes every value it accepts and calls
// FinishDocument() at the end.
//
// Thread safety: JsonDocument uses a thread-local parser, so a document must be used and destroyed
// on the thread that opened it (true of the codec, which is synchronous).

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/parameters.h"
#include "protocol/http/body_buffer.h"
#include "simdjson.h"

namespace brigade::protocol::http {

static_assert(BodyBuffer::kPaddingBytes >= simdjson::SIMDJSON_PADDING,
              "body buffers must carry simdjson's padding");

// The part of a request an error message is about ("input 'x'", "request parameters"). Built
// only when a message needs it: formatting it for every well-formed field would cost more than
// parsing the field.
using LazyText = absl::FunctionRef<std::string()>;

// An On-Demand document over bytes [0, json_bytes) of a padded body buffer: in place when they are
// the whole body, else over a zero-padded copy (what follows is binary data, not padding).
class JsonDocument {
 public:
  // `body` must outlive the document. `json_bytes` <= body.size().
  JsonDocument(const BodyBuffer& body, size_t json_bytes);
  JsonDocument(const JsonDocument&) = delete;
  JsonDocument& operator=(const JsonDocument&) = delete;
  ~JsonDocument();

  // The root, which must be a JSON object; `what` names the document in errors ("request body").
  absl::StatusOr<simdjson::ondemand::object> RootObject(std::string_view what);

  // Fails when anything but whitespace follows the root value.
  absl::Status FinishDocument(std::string_view what);

  size_t json_bytes() const { return json_bytes_; }

 private:
  simdjson::ondemand::parser* parser_;
  // Set when the document is too large to be parsed with the thread's reusable parser.
  std::unique_ptr<simdjson::ondemand::parser> own_parser_;
  // The JSON header of a body with a binary section, followed by zeroed padding.
  simdjson::padded_string header_copy_;
  simdjson::ondemand::document document_;
  simdjson::error_code open_error_ = simdjson::SUCCESS;
  size_t json_bytes_;
};

// "malformed JSON in <where>: <simdjson's reason>" as INVALID_ARGUMENT.
absl::Status JsonError(std::string_view where, simdjson::error_code error);

// The source text of a scalar value for error messages, trimmed and shortened.
std::string TokenText(simdjson::ondemand::value& value);

// Reads a `parameters` object: bool, integer (int64, or uint64 above int64's range), double or
// string values; anything else (null, arrays, objects) is refused naming `where` and the key.
absl::Status ReadParameters(simdjson::ondemand::value& value, LazyText where, Parameters* out);

// Reads a string / a bool value, naming `where` on a type mismatch.
absl::StatusOr<std::string_view> ReadString(simdjson::ondemand::value& value, LazyText where);
absl::StatusOr<bool> ReadBool(simdjson::ondemand::value& value, LazyText where);

// "<where> has an unknown field '<key>'" as INVALID_ARGUMENT, for a field a decoder does not know.
absl::Status UnknownField(std::string_view where, simdjson::ondemand::field& entry);

}  // namespace brigade::protocol::http

#endif  // BRIGADE_PROTOCOL_HTTP_JSON_READER_H_
