#include "cache/cache_config.h"

#include "core/strings.h"

namespace brigade::cache {
namespace {

constexpr uint64_t kMaxTtlMs = uint64_t{30} * 24 * 3600 * 1000;
constexpr uint64_t kMaxBytes = uint64_t{1} << 40;

}  // namespace

absl::StatusOr<std::optional<ResponseCacheOptions>> ResponseCacheOptionsFromConfig(
    std::string_view model_name, const config::ModelResponseCache& config) {
  if (!config.enable()) return std::nullopt;
  ResponseCacheOptions options;
  switch (config.tier()) {
    case config::ModelResponseCache::TIER_DEFAULT:
    case config::ModelResponseCache::TIER_MEMORY:
      options.tier = Tier::kMemory;
      break;
    case config::ModelResponseCache::TIER_REDIS:
      options.tier = Tier::kRedis;
      break;
    case config::ModelResponseCache::TIER_BOTH:
      options.tier = Tier::kBoth;
      break;
    default:
      return absl::InvalidArgumentError(StrCat("model '", model_name,
                                               "': response_cache.tier has unknown value ",
                                               static_cast<int>(config.tier())));
  }
  if (config.ttl_ms() > kMaxTtlMs) {
    return absl::InvalidArgumentError(StrCat("model '", model_name, "': response_cache.ttl_ms ",
                                             config.ttl_ms(), " exceeds 30 days"));
  }
  options.ttl_ms = config.ttl_ms() == 0 ? kDefaultTtlMs : static_cast<int64_t>(config.ttl_ms());
  if (config.max_bytes() > kMaxBytes) {
    return absl::InvalidArgumentError(StrCat("model '", model_name, "': response_cache.max_bytes ",
                                             config.max_bytes(), " exceeds 1 TiB"));
  }
  options.max_bytes =
      static_cast<size_t>(config.max_bytes() == 0 ? kDefaultMaxBytes : config.max_bytes());
  for (const std::string& name : config.key_parameters()) {
    if (name.empty()) {
      return absl::InvalidArgumentError(
          StrCat("model '", model_name, "': response_cache.key_parameters has an empty name"));
    }
    options.key_parameters.push_back(name);
  }
  options.coalesce = !config.disable_coalescing();
  return options;
}

}  // namespace brigade::cache
