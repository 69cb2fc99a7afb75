#ifndef BRIGADE_TOOLS_CLIENT_JSON_DECODE_H_
#define BRIGADE_TOOLS_CLIENT_JSON_DECODE_H_

// Reading the server's JSON answers with simdjson's DOM API: parsing with a reused parser, typed
// field access whose errors name the field, and the protocol's `parameters` objects. Shared by
// the client's infer and admin decoders.
//
// Every error is INTERNAL ("malformed response: ..."): a response the client cannot read is the
// server's fault, not the caller's. Thread safety: a parser is used by one thread at a time.

#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/parameters.h"
#include "core/shape.h"
#include "simdjson.h"

namespace brigade::client {

// "malformed <what> response: <detail>" as INTERNAL.
absl::Status MalformedResponse(std::string_view what, std::string_view detail);

// Parses `json`, which must be followed by kJsonPaddingBytes readable bytes (no copy is made).
absl::StatusOr<simdjson::dom::element> ParseJson(simdjson::dom::parser& parser,
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

}  // namespace brigade::client

#endif  // BRIGADE_TOOLS_CLIENT_JSON_DECODE_H_
