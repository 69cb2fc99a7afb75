#ifndef BRIGADE_CACHE_CACHED_VALUE_H_
#define BRIGADE_CACHE_CACHED_VALUE_H_

// The cached answer of one request (CachedEntry) and its compact, versioned binary format, which
// the memory tier keeps and the Redis tier stores as the value of `SET key value PX ttl`.
//
// Format (all integers little-endian; "str" = u32 length + bytes; see byte_io.h):
//   "BRCV" u8 format_version(1) u8 flags(0) u16 reserved(0)
//   u64 id.low  u64 id.high  u64 check.low  u64 check.high     the key parts (cache_key.h)
//   i64 expires_unix_ms                                         0 = unknown
//   str descriptor                                              compared in full on lookup
//   str model_version  params response_parameters
//   u32 output_count, per output:
//     str name  u8 dtype  u32 rank  i64 dims[rank]  params  u64 byte_size
//     zero padding up to a 16-byte offset, then byte_size bytes of tensor data
//   u64 XXH3-64 of every byte before it
// Decoding checks every length against the input, the format version, dtypes, that each
// tensor's bytes match its shape (or hold exactly its BYTES elements), the padding, the checksum
// and that nothing trails it; anything else is rejected, never partially used. A value written
// by a different format version is rejected too (read as a miss), so formats can evolve.
//
// Immutability: a CachedEntry owns one buffer (the encoded value); its output tensors are views
// into it, 16-byte aligned when the buffer is heap-allocated. Entries are shared as
// std::shared_ptr<const CachedEntry>, and responses built from them share the buffer: nobody
// may write through those tensors (the contract of every response tensor: codecs only read).
// Encoding copies the response's bytes, so a cached entry never aliases a backend buffer.
//
// Pure functions; thread-safe.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "cache/cache_key.h"
#include "core/infer_response.h"

namespace brigade::cache {

inline constexpr uint8_t kCachedValueFormatVersion = 1;

struct CachedEntry {
  Hash128 id;
  Hash128 check;
  std::string_view descriptor;  // into `blob`
  int64_t expires_unix_ms = 0;
  std::string model_version;
  Parameters parameters;
  std::vector<InferOutput> outputs;  // tensors are views into `blob`
  std::shared_ptr<const std::string> blob;

  // Bytes this entry holds in memory (the value plus bookkeeping), for byte budgets.
  size_t charge_bytes() const;
};

// Encodes `response` (model_version, parameters, outputs; not id or clock) as the answer to
// `key`. Copies the output bytes.
std::string EncodeCachedValue(const CacheKey& key, const InferResponse& response,
                              int64_t expires_unix_ms);

// Decodes a value. INVALID_ARGUMENT naming the first problem when it is malformed, corrupt,
// truncated or of another format version. The entry keeps `blob` alive.
absl::StatusOr<std::shared_ptr<const CachedEntry>> DecodeCachedValue(
    std::shared_ptr<const std::string> blob);

}  // namespace brigade::cache

#endif  // BRIGADE_CACHE_CACHED_VALUE_H_
