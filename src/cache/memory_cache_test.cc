#include "cache/memory_cache.h"

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace brigade::cache {
namespace {

constexpr int64_t kMs = 1'000'000;

CacheKey KeyOf(float input, int64_t version = 1,
               Hash128 (*id_override)(const CacheKey&) = nullptr) {
  InferRequest request;
  request.model_name = "m";
  request.inputs.push_back({"x", *Tensor::FromValues<float>({1}, std::vector<float>{input}), {}});
  return KeyBuilder(KeyBuilder::Options{{}, id_override}).Build(request, version, "");
}

std::shared_ptr<const CachedEntry> EntryFor(const CacheKey& key, size_t output_floats = 16) {
  InferResponse response;
  response.model_version = std::to_string(key.version);
  std::vector<float> values(output_floats, 1.0f);
  response.outputs.push_back(
      {"y", *Tensor::FromValues<float>({static_cast<int64_t>(output_floats)}, values), {}});
  return *DecodeCachedValue(
      std::make_shared<const std::string>(EncodeCachedValue(key, response, 0)));
}

std::unique_ptr<MemoryCache> MakeCache(FakeClock* clock, size_t max_bytes, int shards = 1) {
  return *MemoryCache::Create(MemoryCache::Options{max_bytes, shards, clock});
}

TEST(MemoryCacheTest, StoredEntryIsFoundAndOthersMiss) {
  FakeClock clock;
  auto cache = MakeCache(&clock, 1 << 20, 4);
  const CacheKey a = KeyOf(1);
  auto entry = EntryFor(a);
  ASSERT_TRUE(cache->Insert(a, entry, 1000 * kMs));
  EXPECT_EQ(cache->Lookup(a), entry);
  EXPECT_EQ(cache->Lookup(KeyOf(2)), nullptr);
  const MemoryTierStats stats = cache->Stats();
  EXPECT_EQ(stats.hits, 1u);
  EXPECT_EQ(stats.misses, 1u);
  EXPECT_EQ(stats.entries, 1u);
  EXPECT_EQ(stats.bytes_used, entry->charge_bytes());
}

TEST(MemoryCacheTest, EntryExpiresExactlyAtItsTtl) {
  FakeClock clock;
  auto cache = MakeCache(&clock, 1 << 20);
  const CacheKey a = KeyOf(1);
  ASSERT_TRUE(cache->Insert(a, EntryFor(a), 100 * kMs));
  clock.AdvanceNs(100 * kMs - 1);
  EXPECT_NE(cache->Lookup(a), nullptr);
  clock.AdvanceNs(1);
  EXPECT_EQ(cache->Lookup(a), nullptr);
  const MemoryTierStats stats = cache->Stats();
  EXPECT_EQ(stats.expirations, 1u);
  EXPECT_EQ(stats.entries, 0u);
  EXPECT_EQ(stats.bytes_used, 0u);
}

TEST(MemoryCacheTest, ByteBudgetEvictsTheLeastRecentlyUsed) {
  FakeClock clock;
  const CacheKey a = KeyOf(1), b = KeyOf(2), c = KeyOf(3), d = KeyOf(4);
  const size_t charge = EntryFor(a)->charge_bytes();
  auto cache = MakeCache(&clock, 3 * charge + charge / 2);
  for (const CacheKey* key : {&a, &b, &c}) ASSERT_TRUE(cache->Insert(*key, EntryFor(*key), kMs));
  ASSERT_NE(cache->Lookup(a), nullptr);  // a is now more recent than b
  ASSERT_TRUE(cache->Insert(d, EntryFor(d), kMs));
  EXPECT_EQ(cache->Lookup(b), nullptr) << "b was least recently used";
  EXPECT_NE(cache->Lookup(a), nullptr);
  EXPECT_NE(cache->Lookup(c), nullptr);
  EXPECT_NE(cache->Lookup(d), nullptr);
  const MemoryTierStats stats = cache->Stats();
  EXPECT_EQ(stats.evictions, 1u);
  EXPECT_EQ(stats.expirations, 0u);
  EXPECT_LE(stats.bytes_used, stats.max_bytes);
  EXPECT_EQ(stats.entries, 3u);
}

TEST(MemoryCacheTest, ExpiredEntriesReachedByEvictionCountAsExpirations) {
  FakeClock clock;
  const CacheKey a = KeyOf(1), b = KeyOf(2);
  const size_t charge = EntryFor(a)->charge_bytes();
  auto cache = MakeCache(&clock, charge + charge / 2);
  ASSERT_TRUE(cache->Insert(a, EntryFor(a), 10 * kMs));
  clock.AdvanceNs(20 * kMs);
  ASSERT_TRUE(cache->Insert(b, EntryFor(b), 10 * kMs));
  const MemoryTierStats stats = cache->Stats();
  EXPECT_EQ(stats.expirations, 1u);
  EXPECT_EQ(stats.evictions, 0u);
}

TEST(MemoryCacheTest, ReplacingAnEntryDoesNotCountItsBytesTwice) {
  FakeClock clock;
  auto cache = MakeCache(&clock, 1 << 20);
  const CacheKey a = KeyOf(1);
  ASSERT_TRUE(cache->Insert(a, EntryFor(a, 16), kMs));
  auto bigger = EntryFor(a, 64);
  ASSERT_TRUE(cache->Insert(a, bigger, kMs));
  EXPECT_EQ(cache->Stats().bytes_used, bigger->charge_bytes());
  EXPECT_EQ(cache->Lookup(a), bigger);
}

TEST(MemoryCacheTest, EntryLargerThanAShardIsNotStored) {
  FakeClock clock;
  const CacheKey a = KeyOf(1);
  auto entry = EntryFor(a, 4096);
  auto cache = MakeCache(&clock, entry->charge_bytes() * 4, /*shards=*/8);
  EXPECT_FALSE(cache->Insert(a, entry, kMs));
  EXPECT_EQ(cache->Lookup(a), nullptr);
  EXPECT_EQ(cache->Stats().rejected_too_large, 1u);
}

TEST(MemoryCacheTest, GuardedInsertStoresOnlyWhileItsCountIsUnchanged) {
  FakeClock clock;
  auto cache = MakeCache(&clock, 1 << 20);
  std::atomic<uint64_t> invalidations{3};
  const CacheKey a = KeyOf(1);
  const MemoryCache::InsertGuard current{&invalidations, 3};
  EXPECT_TRUE(cache->Insert(a, EntryFor(a, 16), kMs, &current));
  const CacheKey b = KeyOf(2);
  const MemoryCache::InsertGuard stale{&invalidations, 2};
  EXPECT_FALSE(cache->Insert(b, EntryFor(b, 16), kMs, &stale));
  EXPECT_EQ(cache->Lookup(b), nullptr);
  EXPECT_NE(cache->Lookup(a), nullptr);
  EXPECT_EQ(cache->Stats().rejected_stale, 1u);
}

Hash128 SameId(const CacheKey&) { return {7, 7}; }

TEST(MemoryCacheTest, IdCollisionIsAMissNeverAnotherRequestsAnswer) {
  FakeClock clock;
  auto cache = MakeCache(&clock, 1 << 20, 4);
  const CacheKey a = KeyOf(1, 1, &SameId);
  const CacheKey b = KeyOf(2, 1, &SameId);
  ASSERT_EQ(a.id, b.id);
  ASSERT_TRUE(cache->Insert(a, EntryFor(a), kMs));
  EXPECT_EQ(cache->Lookup(b), nullptr);
  EXPECT_EQ(cache->Stats().collisions, 1u);
  EXPECT_NE(cache->Lookup(a), nullptr);
}

TEST(MemoryCacheTest, EraseByVersionKeepsOtherVersions) {
  FakeClock clock;
  auto cache = MakeCache(&clock, 1 << 20, 4);
  const CacheKey v1 = KeyOf(1, 1), v2 = KeyOf(1, 2), v3 = KeyOf(1, 3);
  for (const CacheKey* key : {&v1, &v2, &v3}) ASSERT_TRUE(cache->Insert(*key, EntryFor(*key), kMs));
  EXPECT_EQ(cache->EraseVersion(2), 1u);
  EXPECT_EQ(cache->Lookup(v2), nullptr);
  EXPECT_NE(cache->Lookup(v1), nullptr);
  const std::vector<int64_t> keep = {3};
  EXPECT_EQ(cache->EraseVersionsExcept(keep), 1u);
  EXPECT_EQ(cache->Lookup(v1), nullptr);
  EXPECT_NE(cache->Lookup(v3), nullptr);
  EXPECT_EQ(cache->Clear(), 1u);
  const MemoryTierStats stats = cache->Stats();
  EXPECT_EQ(stats.entries, 0u);
  EXPECT_EQ(stats.bytes_used, 0u);
  EXPECT_EQ(stats.invalidated, 3u);
}

TEST(MemoryCacheTest, ReturnedEntryStaysValidAfterEviction) {
  FakeClock clock;
  auto cache = MakeCache(&clock, 1 << 20);
  const CacheKey a = KeyOf(1);
  ASSERT_TRUE(cache->Insert(a, EntryFor(a), kMs));
  std::shared_ptr<const CachedEntry> held = cache->Lookup(a);
  cache->Clear();
  ASSERT_NE(held, nullptr);
  EXPECT_EQ(held->outputs[0].tensor.values<float>()[0], 1.0f);
}

TEST(MemoryCacheTest, ConcurrentLookupsAndInsertsStayConsistent) {
  FakeClock clock;
  const size_t charge = EntryFor(KeyOf(0))->charge_bytes();
  auto cache = MakeCache(&clock, 64 * charge, 8);
  std::vector<CacheKey> keys;
  std::vector<std::shared_ptr<const CachedEntry>> entries;
  for (int i = 0; i < 256; ++i) {
    keys.push_back(KeyOf(static_cast<float>(i)));
    entries.push_back(EntryFor(keys.back()));
  }
  std::atomic<uint64_t> wrong{0};
  std::vector<std::thread> threads;
  threads.reserve(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 5000; ++i) {
        const size_t k = static_cast<size_t>((i * 7 + t * 13) % 256);
        if (i % 3 == 0) {
          cache->Insert(keys[k], entries[k], 1000 * kMs);
        } else if (auto hit = cache->Lookup(keys[k]); hit != nullptr && hit != entries[k]) {
          wrong.fetch_add(1);
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0u);
  const MemoryTierStats stats = cache->Stats();
  EXPECT_LE(stats.bytes_used, stats.max_bytes);
  EXPECT_EQ(stats.hits + stats.misses, 4u * 5000 - 4u * 1667);
}

}  // namespace
}  // namespace brigade::cache
