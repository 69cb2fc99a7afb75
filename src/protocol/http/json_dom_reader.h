#ifndef BRIGADE_PROTOCOL_HTTP_JSON_DOM_READER_H_
#define BRIGADE_PROTOCOL_HTTP_JSON_DOM_READER_H_

// Reading a server's JSON answers, on the client's side, with simdjson's DOM API: parsing with a
// reused parser, typed field access whose errors name the field, and the protocol's `parameters`
// objects. Shared by the response decoders of this folder (infer, metadata, statistics,
// repository).
//
// Why DOM here and On-Demand for requests (json_reader.h): a server's reader must be strict (it
// refuses unknown and duplicate fields, so it walks every value once, in order), while a client's
// reader must accept what newer servers add and look fields up by name in any order, which is
// what the DOM is for.
//
// Every error is INTERNAL ("malformed <what> response: ..."): a response the client cannot read
// is the server's fault, not the caller's. Thread safety: a parser is used by one thread at a
// time.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/parameters.h"
#include "core/shape.h"
#include "simdjson.h"

namespace brigade::protocol::http {

// Readable bytes a JSON text handed to these decoders must have after its end (simdjson reads
// ahead); the client's receive buffer provides them.
inline constexpr size_t kJsonPaddingBytes = 64;

// "malformed <what> response: <detail>" as INTERNAL.
absl::Status MalformedResponse(std::string_view what, std::string_view detail);

// Parses `json`, which must be followed by kJsonPaddingBytes readable bytes (no copy is made).
absl::StatusOr<simdjson::dom::element> ParseJson(simdjson::dom::parser& parser,
                                                 std::string_view json, std::string_view what);
// The same, for a body that must be a JSON object.
absl::StatusOr<simdjson::dom::object> ParseJsonObject(simdjson::dom::parser& parser,
                                                      std::string_view json, std::string_view what);

// Required fields; `what` names the response for the error.
absl::StatusOr<std::string_view> RequiredString(simdjson::dom::object object, std::string_view key,
                                                std::string_view what);
// Optional string: empty when absent; an error when present with another type.
absl::StatusOr<std::string_view> OptionalString(simdjson::dom::object object, std::string_view key,
                                                std::string_view what);
// Unsigned integer (also accepts a decimal string, as some servers send uint64 as text).
absl::StatusOr<uint64_t> OptionalUint(simdjson::dom::object object, std::string_view key,
                                      std::string_view what);
absl::StatusOr<Shape> ReadShape(simdjson::dom::element value, std::string_view what);

// A `parameters` object: bool, int64, uint64, double or string values.
absl::Status ReadParameters(simdjson::dom::element value, std::string_view what, Parameters* out);

}  // namespace brigade::protocol::http

#endif  // BRIGADE_PROTOCOL_HTTP_JSON_DOM_READER_H_
