// A build without Redis (BRIGADE_WITH_REDIS=OFF): every way of asking for the Redis tier fails
// with FAILED_PRECONDITION saying the binary was built without Redis, and the memory tier still
// works. Registered only in such a build (scripts/edge builds and runs it).
#include <memory>
#include <string>

#include "cache/cache_manager.h"
#include "cache/invalidation.h"
#include "cache/redis_tier.h"
#include "cache/response_cache.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::cache {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr const char* kBuiltWithout = "built without Redis (BRIGADE_WITH_REDIS=OFF";

TEST(RedisTierNoneTest, IsNotInTheBuildAndRefusesToCreateNamingTheAddress) {
  EXPECT_FALSE(RedisTier::InBuild());
  RedisTier::Options options;
  options.host = "cache.example";
  options.port = 6380;
  absl::StatusOr<std::unique_ptr<RedisTier>> tier = RedisTier::Create(options);
  ASSERT_FALSE(tier.ok());
  EXPECT_EQ(tier.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(tier.status().message(),
              AllOf(HasSubstr("cache.example:6380"), HasSubstr(kBuiltWithout)));
}

TEST(RedisTierNoneTest, OnlyTheMemoryTierIsInTheBuild) {
  EXPECT_TRUE(CheckTierInBuild("resnet", Tier::kMemory).ok());
  for (Tier tier : {Tier::kRedis, Tier::kBoth}) {
    absl::Status status = CheckTierInBuild("resnet", tier);
    EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << TierName(tier);
    EXPECT_THAT(status.message(), AllOf(HasSubstr("model 'resnet'"), HasSubstr(kBuiltWithout)));
  }
}

TEST(RedisTierNoneTest, CacheManagerWithARedisHostFailsToCreate) {
  CacheManager::Options options;
  options.redis_host = "127.0.0.1";
  absl::StatusOr<std::unique_ptr<CacheManager>> manager = CacheManager::Create(options);
  ASSERT_FALSE(manager.ok());
  EXPECT_EQ(manager.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(manager.status().message(), HasSubstr(kBuiltWithout));
}

TEST(RedisTierNoneTest, ModelsAskingForRedisTiersFailAndMemoryTierModelsServe) {
  absl::StatusOr<std::unique_ptr<CacheManager>> manager = CacheManager::Create({});
  ASSERT_TRUE(manager.ok()) << manager.status();
  EXPECT_FALSE((*manager)->has_redis());
  EXPECT_FALSE((*manager)->RedisStats().has_value());
  EXPECT_TRUE((*manager)->WaitRedisReady(absl::ZeroDuration()));
  for (Tier tier : {Tier::kRedis, Tier::kBoth}) {
    ResponseCacheOptions options;
    options.tier = tier;
    absl::StatusOr<std::shared_ptr<ResponseCache>> cache =
        (*manager)->CreateCache("resnet", options);
    ASSERT_FALSE(cache.ok()) << TierName(tier);
    EXPECT_EQ(cache.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(cache.status().message(),
                AllOf(HasSubstr("model 'resnet'"), HasSubstr(std::string(TierName(tier))),
                      HasSubstr(kBuiltWithout)));
  }
  absl::StatusOr<std::shared_ptr<ResponseCache>> memory =
      (*manager)->CreateCache("resnet", ResponseCacheOptions{});
  ASSERT_TRUE(memory.ok()) << memory.status();
  EXPECT_EQ((*memory)->options().tier, Tier::kMemory);
  EXPECT_TRUE((*manager)->InvalidateAndWait(InvalidationScope::All(), absl::Seconds(1)).ok());
}

}  // namespace
}  // namespace brigade::cache
