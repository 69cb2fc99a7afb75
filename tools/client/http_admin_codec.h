#ifndef BRIGADE_TOOLS_CLIENT_HTTP_ADMIN_CODEC_H_
#define BRIGADE_TOOLS_CLIENT_HTTP_ADMIN_CODEC_H_

// The client side of KServe v2's non-inference HTTP bodies: server and model metadata, the
// statistics extension, the repository extension, and `{"error": "..."}` answers. Pure functions;
// every `json` argument must be followed by kJsonPaddingBytes readable bytes (http_infer_codec.h).
//
// Decoders accept what Triton and Brigade send and ignore fields they do not know, so newer
// servers stay readable. Failure: INTERNAL naming the response and the field at fault.

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/client/client_types.h"

namespace simdjson::dom {
class parser;
}

namespace brigade::client {

absl::StatusOr<protocol::ServerMetadata> DecodeServerMetadata(simdjson::dom::parser& parser,
                                                    std::string_view json);
absl::StatusOr<protocol::ModelMetadata> DecodeModelMetadata(simdjson::dom::parser& parser,
                                                  std::string_view json);
// {"model_stats": [...]}.
absl::StatusOr<std::vector<protocol::ModelStatistics>> DecodeModelStatistics(simdjson::dom::parser& parser,
                                                                   std::string_view json);
// [{"name","version","state","reason"}, ...].
absl::StatusOr<std::vector<protocol::RepositoryIndexEntry>> DecodeRepositoryIndex(simdjson::dom::parser& parser,
                                                                   std::string_view json);

// The server's message in an error body: the `error` string of a JSON object, else the body
// itself (trimmed and shortened), else `fallback` when the body is empty.
std::string ErrorMessageFromBody(simdjson::dom::parser& parser, std::string_view body,
                                 std::string_view fallback);

// Request bodies of the repository extension.
std::string EncodeRepositoryIndexRequest(bool ready_only);
std::string EncodeLoadRequest(std::string_view config_json);

}  // namespace brigade::client

#endif  // BRIGADE_TOOLS_CLIENT_HTTP_ADMIN_CODEC_H_
