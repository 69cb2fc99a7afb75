// Integration tests of the Redis tier against a real redis-server started by the test on a free
// loopback port (and always stopped). Real network time is involved, so waits are bounded
// condition waits on the callbacks, never fixed sleeps, except where Redis's own clock must move
// (the TTL expiry test) or where a poll waits for another process to act.

#include "cache/redis_cache.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "cache/cache_manager.h"
#include "cache/redis_test_server.h"
#include "gtest/gtest.h"

namespace brigade::cache {
namespace {

using Outcome = RedisCache::GetResult::Outcome;

constexpr absl::Duration kWait = absl::Seconds(5);

// A callback result that a test waits for.
template <typename T>
class Await {
 public:
  absl::AnyInvocable<void(T)> Callback() {
    return [this](T value) {
      {
        absl::MutexLock lock(&mu_);
        value_.emplace(std::move(value));
      }
      done_.Notify();
    };
  }
  T Get() {
    EXPECT_TRUE(done_.WaitForNotificationWithTimeout(absl::Seconds(5))) << "callback never ran";
    absl::MutexLock lock(&mu_);
    return std::move(*value_);
  }

 private:
  absl::Notification done_;
  absl::Mutex mu_;
  std::optional<T> value_ ABSL_GUARDED_BY(mu_);
};

std::unique_ptr<InferRequest> MakeRequest(std::string model, float x, int64_t version = 1) {
  auto request = std::make_unique<InferRequest>();
  request->id = "req";
  request->model_name = std::move(model);
  request->model_version = version;
  request->inputs.push_back({"x", *Tensor::FromValues<float>({1}, std::vector<float>{x}), {}});
  return request;
}

CacheKey KeyFor(const InferRequest& request, Hash128 (*id_override)(const CacheKey&) = nullptr) {
  return KeyBuilder(KeyBuilder::Options{{}, id_override}).Build(request, request.model_version, "");
}

InferResponse ResponseFor(const InferRequest& request) {
  InferResponse response;
  response.model_name = request.model_name;
  response.model_version = std::to_string(request.model_version);
  response.id = request.id;
  const float x = request.inputs[0].tensor.values<float>()[0];
  response.outputs.push_back({"y", *Tensor::FromValues<float>({1}, std::vector<float>{2 * x}), {}});
  return response;
}

ResponseCacheOptions TierOptions(Tier tier) {
  ResponseCacheOptions options;
  options.tier = tier;
  return options;
}

int64_t WallNowMs() { return WallNowNs() / 1'000'000; }

class RedisCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<RedisTestServer>> server = RedisTestServer::Start();
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }

  RedisCache::Options CacheOptions() {
    RedisCache::Options options;
    options.port = server_->port();
    // Generous for a loaded 2-core test machine; the strict default is exercised by the
    // paused-server test and the benchmark.
    options.timeout = absl::Milliseconds(100);
    options.reconnect_max = absl::Milliseconds(50);
    options.breaker = {3, 50'000};
    return options;
  }

  std::unique_ptr<RedisCache> MakeCache(RedisCache::Options options) {
    absl::StatusOr<std::unique_ptr<RedisCache>> cache = RedisCache::Create(std::move(options));
    EXPECT_TRUE(cache.ok()) << cache.status();
    EXPECT_TRUE((*cache)->WaitReady(kWait));
    return *std::move(cache);
  }

  RedisCache::GetResult Get(RedisCache& cache, const CacheKey& key) {
    Await<RedisCache::GetResult> result;
    cache.Get(std::make_shared<const CacheKey>(key), result.Callback());
    return result.Get();
  }

  absl::Status Set(RedisCache& cache, const CacheKey& key, const InferResponse& response,
                   int64_t ttl_ms, int64_t expires_unix_ms = 0) {
    Await<absl::Status> result;
    cache.Set(key, EncodeCachedValue(key, response, expires_unix_ms), ttl_ms, result.Callback());
    return result.Get();
  }

  std::unique_ptr<RedisTestServer> server_;
};

TEST_F(RedisCacheTest, StoredAnswerIsReadBackWithATtlSetInRedis) {
  auto cache = MakeCache(CacheOptions());
  auto request = MakeRequest("m", 3);
  const CacheKey key = KeyFor(*request);
  EXPECT_EQ(Get(*cache, key).outcome, Outcome::kMiss);
  ASSERT_TRUE(Set(*cache, key, ResponseFor(*request), 60'000, WallNowMs() + 60'000).ok());

  RedisCache::GetResult hit = Get(*cache, key);
  ASSERT_EQ(hit.outcome, Outcome::kHit) << hit.error;
  EXPECT_EQ(hit.entry->outputs[0].tensor.values<float>()[0], 6.0f);
  EXPECT_GT(hit.remaining_ttl_ms, 59'000);

  absl::StatusOr<RedisReply> ttl = server_->Run({"PTTL", cache->KeyName(key)});
  ASSERT_TRUE(ttl.ok());
  EXPECT_GT(ttl->integer, 0) << "SET ... PX: Redis expires the entry by itself";
  EXPECT_LE(ttl->integer, 60'000);
  const RedisTierStats stats = cache->Stats();
  EXPECT_EQ(stats.hits, 1u);
  EXPECT_EQ(stats.misses, 1u);
  EXPECT_EQ(stats.sets, 1u);
}

TEST_F(RedisCacheTest, RedisDropsTheEntryWhenItsTtlRunsOut) {
  auto cache = MakeCache(CacheOptions());
  auto request = MakeRequest("m", 1);
  const CacheKey key = KeyFor(*request);
  ASSERT_TRUE(Set(*cache, key, ResponseFor(*request), 30).ok());
  // Redis's clock cannot be faked: let 30 ms pass in the server.
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  EXPECT_EQ(Get(*cache, key).outcome, Outcome::kMiss);
}

TEST_F(RedisCacheTest, ValuePastItsOwnExpiryIsNotServed) {
  auto cache = MakeCache(CacheOptions());
  auto request = MakeRequest("m", 1);
  const CacheKey key = KeyFor(*request);
  // Redis still holds it (long PX), but the value says it expired: e.g. skewed writers.
  ASSERT_TRUE(Set(*cache, key, ResponseFor(*request), 60'000, WallNowMs() - 1).ok());
  EXPECT_EQ(Get(*cache, key).outcome, Outcome::kExpired);
}

TEST_F(RedisCacheTest, CorruptValueIsAMiss) {
  auto cache = MakeCache(CacheOptions());
  auto request = MakeRequest("m", 1);
  const CacheKey key = KeyFor(*request);
  ASSERT_TRUE(server_->Run({"SET", cache->KeyName(key), "not a cached value"}).ok());
  RedisCache::GetResult result = Get(*cache, key);
  EXPECT_EQ(result.outcome, Outcome::kCorrupt);
  EXPECT_EQ(result.entry, nullptr);
  EXPECT_EQ(cache->Stats().corrupt, 1u);
}

Hash128 SameId(const CacheKey&) { return {3, 3}; }

TEST_F(RedisCacheTest, ForcedIdCollisionNeverReturnsTheOtherRequestsAnswer) {
  auto cache = MakeCache(CacheOptions());
  auto a = MakeRequest("m", 1);
  auto b = MakeRequest("m", 2);
  const CacheKey ka = KeyFor(*a, &SameId);
  const CacheKey kb = KeyFor(*b, &SameId);
  ASSERT_EQ(cache->KeyName(ka), cache->KeyName(kb)) << "same Redis key";
  ASSERT_TRUE(Set(*cache, ka, ResponseFor(*a), 60'000).ok());
  EXPECT_EQ(Get(*cache, kb).outcome, Outcome::kMismatch);
  EXPECT_EQ(Get(*cache, ka).outcome, Outcome::kHit);
}

TEST_F(RedisCacheTest, InvalidationDeletesExactlyTheScope) {
  auto cache = MakeCache(CacheOptions());
  std::vector<std::pair<std::unique_ptr<InferRequest>, CacheKey>> stored;
  for (auto [model, version] : std::vector<std::pair<std::string, int64_t>>{
           {"a", 1}, {"a", 2}, {"a:b", 1}, {"a*", 1}, {"b", 1}}) {
    auto request = MakeRequest(model, 1, version);
    CacheKey key = KeyFor(*request);
    ASSERT_TRUE(Set(*cache, key, ResponseFor(*request), 60'000).ok());
    stored.emplace_back(std::move(request), std::move(key));
  }
  auto exists = [&](size_t i) {
    return server_->Run({"EXISTS", cache->KeyName(stored[i].second)})->integer == 1;
  };

  Await<absl::Status> version_done;
  cache->Invalidate(InvalidationScope::ModelVersion("a", 1), version_done.Callback());
  ASSERT_TRUE(version_done.Get().ok());
  EXPECT_FALSE(exists(0));
  EXPECT_TRUE(exists(1));
  EXPECT_TRUE(exists(2)) << "model 'a:b' is not model 'a'";

  Await<absl::Status> model_done;
  cache->Invalidate(InvalidationScope::Model("a"), model_done.Callback());
  ASSERT_TRUE(model_done.Get().ok());
  EXPECT_FALSE(exists(1));
  EXPECT_TRUE(exists(2));
  EXPECT_TRUE(exists(3)) << "glob characters in names are escaped";
  EXPECT_TRUE(exists(4));

  Await<absl::Status> all_done;
  cache->Invalidate(InvalidationScope::All(), all_done.Callback());
  ASSERT_TRUE(all_done.Get().ok());
  for (size_t i = 0; i < stored.size(); ++i) EXPECT_FALSE(exists(i)) << i;
  EXPECT_EQ(cache->Stats().keys_deleted, 5u);
}

TEST_F(RedisCacheTest, PausedRedisAnswersWithinTheTimeoutAndOpensTheBreaker) {
  RedisCache::Options options = CacheOptions();
  options.timeout = absl::Milliseconds(20);
  auto cache = MakeCache(options);
  auto request = MakeRequest("m", 1);
  const CacheKey key = KeyFor(*request);
  ASSERT_TRUE(Set(*cache, key, ResponseFor(*request), 60'000).ok());
  server_->Pause();
  for (int i = 0; i < 5; ++i) {
    const auto start = std::chrono::steady_clock::now();
    RedisCache::GetResult result = Get(*cache, key);
    const auto elapsed = std::chrono::steady_clock::now() - start;
    EXPECT_EQ(result.outcome, Outcome::kError);
    EXPECT_LT(elapsed, std::chrono::milliseconds(500)) << "bounded by the timeout, not by Redis";
  }
  RedisTierStats stats = cache->Stats();
  EXPECT_GE(stats.data.timeouts, 3u);
  EXPECT_GE(stats.data.rejected_open, 1u) << "after 3 timeouts the breaker answers at once";
  EXPECT_GE(stats.data.breaker_opens, 1u);

  server_->Resume();
  // After the open period a probe goes through and the breaker closes again.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  Outcome outcome = Outcome::kError;
  while (outcome != Outcome::kHit && std::chrono::steady_clock::now() < deadline) {
    outcome = Get(*cache, key).outcome;
    if (outcome != Outcome::kHit) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(outcome, Outcome::kHit);
  EXPECT_EQ(cache->Stats().data.breaker_state, CircuitBreaker::State::kClosed);
}

// ---- Through CacheManager / ResponseCache, as the server uses it. ----

class ManagerTest : public RedisCacheTest {
 protected:
  std::unique_ptr<CacheManager> MakeManager(int64_t (*wall_now_ns)() = WallNowNs) {
    CacheManager::Options options;
    options.wall_now_ns = wall_now_ns;
    options.redis_host = "127.0.0.1";
    options.redis_port = server_->port();
    options.redis_timeout = absl::Milliseconds(100);
    options.redis_breaker = {3, 50'000};
    absl::StatusOr<std::unique_ptr<CacheManager>> manager = CacheManager::Create(options);
    EXPECT_TRUE(manager.ok()) << manager.status();
    EXPECT_TRUE((*manager)->WaitRedisReady(kWait));
    return *std::move(manager);
  }

  // Serves one request through `cache` with a model that answers inline (y = 2x); returns the
  // answer.
  absl::StatusOr<InferResponse> Serve(ResponseCache& cache, float x) {
    auto request = MakeRequest("m", x);
    Await<absl::StatusOr<InferResponse>> answer;
    request->on_complete = answer.Callback();
    cache.Serve(
        std::move(request), 1, "", stats_,
        [this, &cache](std::unique_ptr<InferRequest> r, ResponseCache::PendingStore pending) {
          runs_.fetch_add(1);
          InferResponse response = ResponseFor(*r);
          const absl::StatusOr<InferResponse> outcome = response;
          r->Complete(std::move(response));
          cache.Finish(pending, outcome, {});
        });
    return answer.Get();
  }

  // Stores reach Redis after the client was answered (asynchronously, by design); wait for
  // them before another process looks.
  void WaitForRedisKeys(int64_t count) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (server_->Run({"DBSIZE"})->integer < count &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ASSERT_GE(server_->Run({"DBSIZE"})->integer, count);
  }

  static bool IsHit(const absl::StatusOr<InferResponse>& answer) {
    return answer.ok() && answer->parameters.GetBool(kCacheHitParameter) == true;
  }

  std::atomic<int> runs_{0};
  std::shared_ptr<telemetry::ModelStats> stats_ =
      std::make_shared<telemetry::ModelStats>("m", "1", 0);
};

TEST_F(ManagerTest, AnswerStoredByOneProcessIsAHitForAnother) {
  auto first = MakeManager();
  auto second = MakeManager();
  auto cache_a = *first->CreateCache("m", TierOptions(Tier::kBoth));
  auto cache_b = *second->CreateCache("m", TierOptions(Tier::kBoth));
  ASSERT_TRUE(Serve(*cache_a, 7).ok());
  ASSERT_EQ(runs_.load(), 1);
  WaitForRedisKeys(1);
  absl::StatusOr<InferResponse> shared = Serve(*cache_b, 7);
  ASSERT_TRUE(IsHit(shared));
  EXPECT_EQ(shared->outputs[0].tensor.values<float>()[0], 14.0f);
  EXPECT_EQ(runs_.load(), 1) << "the second process never ran the model";
  EXPECT_EQ(cache_b->Stats().redis.hits, 1u);
  // Promoted into the second process's memory tier: the next hit does not go to Redis.
  ASSERT_TRUE(IsHit(Serve(*cache_b, 7)));
  EXPECT_EQ(cache_b->Stats().memory.hits, 1u);
}

TEST_F(ManagerTest, InvalidationBroadcastEmptiesTheOtherProcessesMemoryTier) {
  auto first = MakeManager();
  auto second = MakeManager();
  auto cache_a = *first->CreateCache("m", TierOptions(Tier::kBoth));
  auto cache_b = *second->CreateCache("m", TierOptions(Tier::kBoth));
  ASSERT_TRUE(Serve(*cache_a, 1).ok());
  WaitForRedisKeys(1);
  ASSERT_TRUE(IsHit(Serve(*cache_b, 1)));  // now in B's memory tier too
  ASSERT_EQ(cache_b->Stats().memory.entries, 1u);

  ASSERT_TRUE(first->InvalidateAndWait(InvalidationScope::Model("m"), kWait).ok());
  EXPECT_EQ(cache_a->Stats().memory.entries, 0u) << "local memory dropped at once";
  // The message reaches the other process asynchronously.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (cache_b->Stats().memory.entries != 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(cache_b->Stats().memory.entries, 0u);
  EXPECT_GE(second->RedisStats()->invalidations_received, 1u);
  const int runs_before = runs_.load();
  EXPECT_FALSE(IsHit(Serve(*cache_b, 1))) << "gone from Redis too";
  EXPECT_EQ(runs_.load(), runs_before + 1);
}

TEST_F(ManagerTest, RedisKilledUnderLoadCausesMissesNeverFailuresAndRecovers) {
  auto manager = MakeManager();
  auto cache = *manager->CreateCache("m", TierOptions(Tier::kRedis));
  int failures = 0;
  int hits_before_kill = 0;
  for (int i = 0; i < 200; ++i) {
    if (i == 100) server_->Kill();
    absl::StatusOr<InferResponse> answer = Serve(*cache, static_cast<float>(i % 10));
    if (!answer.ok()) ++failures;
    if (i < 100 && IsHit(answer)) ++hits_before_kill;
    if (answer.ok()) {
      EXPECT_EQ(answer->outputs[0].tensor.values<float>()[0], 2.0f * static_cast<float>(i % 10));
    }
  }
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(hits_before_kill, 90);
  const ResponseCacheStats stats = cache->Stats();
  EXPECT_GE(stats.redis.errors, 1u) << "lookups after the kill failed over to misses";
  const uint64_t connects_before = manager->RedisStats()->data.connects;

  ASSERT_TRUE(server_->Restart().ok());
  ASSERT_TRUE(manager->WaitRedisReady(kWait)) << "reconnected by itself";
  EXPECT_GT(manager->RedisStats()->data.connects, connects_before);
  // The restarted Redis is empty; once the breaker lets calls through, answers are shared again.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  bool hit = false;
  while (!hit && std::chrono::steady_clock::now() < deadline) {
    absl::StatusOr<InferResponse> answer = Serve(*cache, 42);
    ASSERT_TRUE(answer.ok());
    hit = IsHit(answer);
    if (!hit) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_TRUE(hit);
  EXPECT_GE(manager->RedisStats()->resyncs, 2u) << "resubscribed after the restart";
}

// Holds the first caller of GatedWallNowNs (a store, which asks for the time while it holds the
// Redis tier) until released or until 100 ms passed, and tells the test it got there.
struct StoreGate {
  std::atomic<bool> armed{false};
  absl::Notification entered;
  absl::Notification released;
};
StoreGate* store_gate = nullptr;

int64_t GatedWallNowNs() {
  if (store_gate != nullptr && store_gate->armed.exchange(false)) {
    store_gate->entered.Notify();
    store_gate->released.WaitForNotificationWithTimeout(absl::Milliseconds(100));
  }
  return WallNowNs();
}

TEST_F(ManagerTest, ManagerDestroyedWhileAStoreHoldsRedisOnItsIoThreadShutsDownCleanly) {
  StoreGate gate;
  store_gate = &gate;
  auto manager = MakeManager(GatedWallNowNs);
  auto cache = *manager->CreateCache("m", TierOptions(Tier::kRedis));
  gate.armed = true;
  // A Redis miss runs the model on the Redis I/O thread, so the store that follows the answer
  // runs there too, holding the Redis tier while it waits at the gate.
  ASSERT_TRUE(Serve(*cache, 3).ok());
  ASSERT_TRUE(gate.entered.WaitForNotificationWithTimeout(absl::Seconds(5)));
  // The manager lets go while the store still holds the tier. The store must not end up
  // destroying it on that I/O thread (which would join the thread from itself and abort): it
  // finishes against a closed tier, a failed store.
  manager.reset();
  gate.released.Notify();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (cache->Stats().redis.store_errors == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(cache->Stats().redis.store_errors, 1u);
  EXPECT_EQ(runs_.load(), 1);
  store_gate = nullptr;
}

// A model reconfigured while requests still use its old cache has two live caches for a moment:
// an invalidation reaches both. The manager holds them weakly: the owner decides their lifetime.
TEST_F(ManagerTest, InvalidationsReachEveryLiveCacheItCreatedAndItOwnsNone) {
  auto manager = MakeManager();
  auto old_cache = *manager->CreateCache("m", TierOptions(Tier::kMemory));
  auto new_cache = *manager->CreateCache("m", TierOptions(Tier::kMemory));
  ASSERT_NE(old_cache, new_cache);
  ASSERT_TRUE(Serve(*old_cache, 3).ok());
  ASSERT_TRUE(Serve(*new_cache, 3).ok());
  ASSERT_TRUE(IsHit(Serve(*old_cache, 3)));
  ASSERT_TRUE(IsHit(Serve(*new_cache, 3)));
  ASSERT_TRUE(manager->InvalidateAndWait(InvalidationScope::Model("m"), kWait).ok());
  EXPECT_FALSE(IsHit(Serve(*old_cache, 3)));
  EXPECT_FALSE(IsHit(Serve(*new_cache, 3)));
  std::weak_ptr<ResponseCache> released = old_cache;
  old_cache.reset();
  EXPECT_TRUE(released.expired());
}

}  // namespace
}  // namespace brigade::cache
