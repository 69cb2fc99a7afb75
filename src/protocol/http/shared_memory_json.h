#ifndef BRIGADE_PROTOCOL_HTTP_SHARED_MEMORY_JSON_H_
#define BRIGADE_PROTOCOL_HTTP_SHARED_MEMORY_JSON_H_

// Bodies of Triton's system shared memory extension (HTTP):
//   POST /v2/systemsharedmemory/region/{name}/register
//        in:  {"key": string, "offset": uint64 (optional, 0), "byte_size": uint64}
//   GET  /v2/systemsharedmemory[/region/{name}]/status
//        out: [{"name": string, "key": string, "offset": uint64, "byte_size": uint64}, ...]
// Unregister takes no body. Each body has both halves here: the server decodes the register
// request and encodes the status; a client (tools/client) encodes the register request. A missing
// key or byte size, a field of the wrong type, an unknown field or malformed JSON is
// INVALID_ARGUMENT naming it; the region's name comes from the URL. Whether the key names a region
// that exists is the registry's business, not the codec's (the codec only checks the key's form:
// protocol/shared_memory.h).
//
// Pure functions; thread-compatible.

#include <span>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "protocol/http/body_buffer.h"
#include "protocol/shared_memory.h"

namespace brigade::protocol::http {

absl::StatusOr<protocol::SharedMemoryRegion> DecodeSharedMemoryRegisterRequest(
    std::string_view name, const BodyBuffer& body);
// The register request's body for `region` (its name goes in the URL, not the body).
std::string EncodeSharedMemoryRegisterRequest(const protocol::SharedMemoryRegion& region);
std::string EncodeSharedMemoryStatus(std::span<const protocol::SharedMemoryRegion> regions);

}  // namespace brigade::protocol::http

#endif  // BRIGADE_PROTOCOL_HTTP_SHARED_MEMORY_JSON_H_
