#ifndef BRIGADE_PROTOCOL_HTTP_REPOSITORY_JSON_H_
#define BRIGADE_PROTOCOL_HTTP_REPOSITORY_JSON_H_

// Bodies of Triton's model repository extension (HTTP):
//   POST /v2/repository/index              in: {} or {"ready": bool} (or no body)
//                                          out: [{"name","version","state","reason"}]
//   POST /v2/repository/models/{m}/load    in: {} or {"parameters": {"config": "<JSON string>"}}
//   POST /v2/repository/models/{m}/unload  in: {} or {"parameters": {"unload_dependents": bool}}
//
// `version` and `reason` are omitted when empty, as Triton does. Load parameters `file:<path>`
// (model files inside the request) are UNIMPLEMENTED; any other unknown field or parameter is
// INVALID_ARGUMENT naming it. `unload_dependents: false` is accepted; `true` (unload the models an
// ensemble uses along with it) is UNIMPLEMENTED, since Brigade unloads exactly the model named.
//
// The server decodes the requests and encodes the index; the client encodes the requests
// (EncodeRepositoryIndexRequest, EncodeLoadRequest) and decodes the index (INTERNAL naming the
// field when malformed; `json` must be followed by kJsonPaddingBytes readable bytes,
// json_dom_reader.h). Pure functions; thread-compatible.

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "protocol/http/body_buffer.h"
#include "protocol/repository_index.h"

namespace simdjson::dom {
class parser;
}

namespace brigade::protocol::http {

// The `ready` flag of an index request (false when absent).
absl::StatusOr<bool> DecodeRepositoryIndexRequest(const BodyBuffer& body);

absl::StatusOr<protocol::LoadModelRequest> DecodeLoadModelRequest(std::string_view model_name,
                                                                  const BodyBuffer& body);

absl::Status DecodeUnloadModelRequest(const BodyBuffer& body);

std::string EncodeRepositoryIndex(std::span<const protocol::RepositoryIndexEntry> entries);

// [{"name","version","state","reason"}, ...].
absl::StatusOr<std::vector<protocol::RepositoryIndexEntry>> DecodeRepositoryIndex(
    simdjson::dom::parser& parser, std::string_view json);

// Request bodies of the repository extension, as the client sends them.
std::string EncodeRepositoryIndexRequest(bool ready_only);
std::string EncodeLoadRequest(std::string_view config_json);

// Brigade's cache invalidation request (POST /v2/cache/invalidate): an optional JSON object
// {"model_name": "m", "model_version": "3"}; empty body or {} = every model.
struct CacheInvalidateRequest {
  std::string model_name;      // empty = all models
  int64_t model_version = -1;  // -1 = all versions
};
absl::StatusOr<CacheInvalidateRequest> DecodeCacheInvalidateRequest(const BodyBuffer& body);

}  // namespace brigade::protocol::http

#endif  // BRIGADE_PROTOCOL_HTTP_REPOSITORY_JSON_H_
