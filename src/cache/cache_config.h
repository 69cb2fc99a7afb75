#ifndef BRIGADE_CACHE_CACHE_CONFIG_H_
#define BRIGADE_CACHE_CACHE_CONFIG_H_

// The model config's `response_cache` block → ResponseCacheOptions.
//
//   response_cache { enable: true }                       Triton's form; all defaults
//   response_cache {
//     enable: true
//     tier: TIER_BOTH          # TIER_MEMORY (default) | TIER_REDIS | TIER_BOTH
//     ttl_ms: 30000            # default 60000
//     max_bytes: 134217728     # memory tier budget, default 64 MiB
//     key_parameters: "temperature"
//     disable_coalescing: false
//   }
//
// Brigade's fields are numbered from 1000 in protocol/model_config.proto, so a Triton config reads
// unchanged. Kept apart from response_cache.h so the cache library itself needs no protobuf.
// Pure; thread-safe.

#include <optional>

#include "absl/status/statusor.h"
#include "cache/response_cache.h"
#include "protocol/model_config.pb.h"

namespace brigade::cache {

inline constexpr int64_t kDefaultTtlMs = 60'000;
inline constexpr uint64_t kDefaultMaxBytes = uint64_t{64} << 20;

// nullopt when caching is not enabled. INVALID_ARGUMENT naming the model and field for values
// out of range (ttl_ms beyond 30 days, max_bytes beyond 1 TiB, empty key parameter names).
absl::StatusOr<std::optional<ResponseCacheOptions>> ResponseCacheOptionsFromConfig(
    std::string_view model_name, const config::ModelResponseCache& config);

}  // namespace brigade::cache

#endif  // BRIGADE_CACHE_CACHE_CONFIG_H_
