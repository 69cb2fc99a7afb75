#ifndef BRIGADE_PROTOCOL_HTTP_METADATA_JSON_H_
#define BRIGADE_PROTOCOL_HTTP_METADATA_JSON_H_

// JSON bodies of the KServe v2 metadata endpoints and of every error response:
//   GET /v2                          {"name","version","extensions":[...]}
//   GET /v2/models/{m}[/versions/v]  {"name","versions":[...],"platform","inputs":[...],
//                                     "outputs":[...]}, tensors as {"name","datatype","shape"}
//   any error                        {"error":"<message>"}
// in both directions: the server encodes them, the client decodes them. The decoders accept what
// Triton and Brigade send and ignore fields they do not know, so newer servers stay readable;
// they fail with INTERNAL naming the response and the field at fault, and every `json` they read
// must be followed by kJsonPaddingBytes readable bytes (json_dom_reader.h). Pure functions;
// thread-compatible.

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "protocol/metadata.h"

namespace simdjson::dom {
class parser;
}

namespace brigade::protocol::http {

std::string EncodeServerMetadata(const protocol::ServerMetadata& metadata);
std::string EncodeModelMetadata(const protocol::ModelMetadata& metadata);
std::string EncodeError(std::string_view message);

absl::StatusOr<protocol::ServerMetadata> DecodeServerMetadata(simdjson::dom::parser& parser,
                                                              std::string_view json);
absl::StatusOr<protocol::ModelMetadata> DecodeModelMetadata(simdjson::dom::parser& parser,
                                                            std::string_view json);

// The server's message in an error body: the `error` string of a JSON object, else the body
// itself (trimmed and shortened), else `fallback` when the body is empty.
std::string ErrorMessageFromBody(simdjson::dom::parser& parser, std::string_view body,
                                 std::string_view fallback);

}  // namespace brigade::protocol::http

#endif  // BRIGADE_PROTOCOL_HTTP_METADATA_JSON_H_
