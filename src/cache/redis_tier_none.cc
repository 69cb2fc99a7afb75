// A build without Redis (BRIGADE_WITH_REDIS=OFF, the edge preset): no Redis client is compiled
// and hiredis is not linked, so every Redis tier asked for is refused here, with the address,
// rather than served from memory alone (redis_tier.h).
#include "cache/redis_tier.h"
#include "core/strings.h"

namespace brigade::cache {

bool RedisTier::InBuild() { return false; }

absl::StatusOr<std::unique_ptr<RedisTier>> RedisTier::Create(Options options) {
  return absl::FailedPreconditionError(
      StrCat("the response cache's Redis tier (", options.host, ":", options.port,
             ") was asked for, but this binary was built without Redis (BRIGADE_WITH_REDIS=OFF, "
             "the edge preset); its models can cache in memory (response_cache tier "
             "TIER_MEMORY)"));
}

}  // namespace brigade::cache
