#include "cache/response_cache.h"

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "cache/redis_tier.h"
#include "core/strings.h"
#include "gtest/gtest.h"

namespace brigade::cache {
namespace {

constexpr int64_t kMs = 1'000'000;

// A model behind a queue, as the scheduler would be: Serve() hands misses to Run(), the test
// executes them when it chooses (y = x * factor), so concurrency is under the test's control.
// Like the server's request pipeline, it answers each request, then hands the outcome back to
// the cache (Finish) for the store and the followers.
class QueueModel {
 public:
  ResponseCache::Runner Runner(ResponseCache* cache) {
    return
        [this, cache](std::unique_ptr<InferRequest> request, ResponseCache::PendingStore pending) {
          absl::MutexLock lock(&mu_);
          queue_.push_back({std::move(request), std::move(pending), cache});
          ++runs_;
        };
  }

  // Executes every queued request, answering with `result` when given, else the computation.
  void ExecuteAll(const absl::Status& error = absl::OkStatus()) {
    std::deque<Run> queue;
    {
      absl::MutexLock lock(&mu_);
      queue.swap(queue_);
    }
    for (auto& [request, pending, cache] : queue) {
      if (!error.ok()) {
        request->Complete(error);
        cache->Finish(pending, error, Runner(cache));
        continue;
      }
      InferResponse response;
      response.model_name = request->model_name;
      response.model_version = std::to_string(1);  // (= "1" trips GCC 12 -Wrestrict)
      response.id = request->id;
      std::vector<float> y;
      for (float x : request->inputs[0].tensor.values<float>()) y.push_back(x * factor);
      response.outputs.push_back(
          {"y", *Tensor::FromValues<float>(request->inputs[0].tensor.shape(), y), {}});
      response.clock = request->clock;
      const absl::StatusOr<InferResponse> outcome = response;
      request->Complete(std::move(response));
      cache->Finish(pending, outcome, Runner(cache));
    }
  }

  int runs() {
    absl::MutexLock lock(&mu_);
    return runs_;
  }

  float factor = 2;

 private:
  struct Run {
    std::unique_ptr<InferRequest> request;
    ResponseCache::PendingStore pending;
    ResponseCache* cache;
  };
  absl::Mutex mu_;
  std::deque<Run> queue_ ABSL_GUARDED_BY(mu_);
  int runs_ ABSL_GUARDED_BY(mu_) = 0;
};

// Default options with one edit (designated initializers trip GCC 12's
// -Wmissing-field-initializers on this struct).
template <typename Edit>
ResponseCacheOptions With(Edit edit) {
  ResponseCacheOptions options;
  edit(options);
  return options;
}

struct Answer {
  bool answered = false;
  absl::StatusOr<InferResponse> result = absl::UnknownError("unanswered");
};

std::unique_ptr<InferRequest> MakeRequest(std::string id, float x, Answer* answer) {
  auto request = std::make_unique<InferRequest>();
  request->id = std::move(id);
  request->model_name = "m";
  request->inputs.push_back(
      {"x", *Tensor::FromValues<float>({2}, std::vector<float>{x, x + 1}), {}});
  request->clock.Mark(Stage::kArrival, 5);
  request->on_complete = [answer](absl::StatusOr<InferResponse> result) {
    answer->answered = true;
    answer->result = std::move(result);
  };
  return request;
}

bool IsHit(const Answer& answer) {
  return answer.result.ok() && answer.result->parameters.GetBool(kCacheHitParameter) == true;
}

class ResponseCacheTest : public ::testing::Test {
 protected:
  std::shared_ptr<ResponseCache> MakeCache(ResponseCacheOptions options = {}) {
    options.ttl_ms = options.ttl_ms == ResponseCacheOptions{}.ttl_ms ? 1000 : options.ttl_ms;
    return *ResponseCache::Create("m", options, {}, &clock_);
  }
  void Serve(ResponseCache& cache, std::unique_ptr<InferRequest> request, int64_t version = 1) {
    cache.Serve(std::move(request), version, "", stats_, model_.Runner(&cache));
  }

  FakeClock clock_;
  QueueModel model_;
  std::shared_ptr<telemetry::ModelStats> stats_ =
      std::make_shared<telemetry::ModelStats>("m", "1", 0);
};

TEST_F(ResponseCacheTest, MissRunsTheModelAndTheRepeatIsAnsweredFromTheCache) {
  auto cache = MakeCache();
  Answer first, second;
  Serve(*cache, MakeRequest("r1", 1, &first));
  EXPECT_EQ(model_.runs(), 1);
  EXPECT_FALSE(first.answered);
  model_.ExecuteAll();
  ASSERT_TRUE(first.result.ok());
  EXPECT_FALSE(IsHit(first));

  Serve(*cache, MakeRequest("r2", 1, &second));
  EXPECT_EQ(model_.runs(), 1) << "a hit never reaches the model";
  ASSERT_TRUE(second.answered);
  ASSERT_TRUE(IsHit(second));
  EXPECT_EQ(second.result->id, "r2");
  EXPECT_EQ(second.result->model_name, "m");
  EXPECT_EQ(second.result->model_version, "1");
  EXPECT_EQ(second.result->clock.at(Stage::kArrival), 5);
  EXPECT_EQ(second.result->outputs[0].tensor.values<float>()[1], 4.0f);

  const protocol::ModelStatistics stats = stats_->Snapshot();
  EXPECT_EQ(stats.inference_stats.cache_hit.count, 1u);
  EXPECT_EQ(stats.inference_stats.cache_miss.count, 1u);
  const ResponseCacheStats cache_stats = cache->Stats();
  EXPECT_EQ(cache_stats.lookups, 2u);
  EXPECT_EQ(cache_stats.hits, 1u);
  EXPECT_EQ(cache_stats.misses, 1u);
  EXPECT_DOUBLE_EQ(cache_stats.hit_rate, 0.5);
  EXPECT_EQ(cache_stats.lookup_memory_hit.count, 1u);
  EXPECT_EQ(cache_stats.lookup_miss.count, 1u);
  EXPECT_EQ(cache_stats.memory.entries, 1u);
}

TEST_F(ResponseCacheTest, DifferentInputsDoNotShareAnswers) {
  auto cache = MakeCache();
  Answer a, b;
  Serve(*cache, MakeRequest("a", 1, &a));
  model_.ExecuteAll();
  Serve(*cache, MakeRequest("b", 10, &b));
  EXPECT_FALSE(b.answered);
  model_.ExecuteAll();
  ASSERT_TRUE(b.result.ok());
  EXPECT_EQ(b.result->outputs[0].tensor.values<float>()[0], 20.0f);
  EXPECT_EQ(model_.runs(), 2);
}

TEST_F(ResponseCacheTest, AnswersExpireAfterTheTtl) {
  auto cache = MakeCache(With([](ResponseCacheOptions& o) { o.ttl_ms = 50; }));
  Answer a, b, c;
  Serve(*cache, MakeRequest("a", 1, &a));
  model_.ExecuteAll();
  clock_.AdvanceNs(49 * kMs);
  Serve(*cache, MakeRequest("b", 1, &b));
  EXPECT_TRUE(IsHit(b));
  clock_.AdvanceNs(1 * kMs);
  Serve(*cache, MakeRequest("c", 1, &c));
  EXPECT_FALSE(c.answered) << "expired: runs the model again";
  EXPECT_EQ(model_.runs(), 2);
  model_.ExecuteAll();
  EXPECT_EQ(cache->Stats().memory.expirations, 1u);
}

TEST_F(ResponseCacheTest, BypassNeitherReadsNorWritesTheCache) {
  auto cache = MakeCache();
  Answer bypassed, normal;
  auto request = MakeRequest("bypass", 1, &bypassed);
  request->parameters.Set(std::string(kCacheControlParameter), std::string("bypass"));
  Serve(*cache, std::move(request));
  model_.ExecuteAll();
  ASSERT_TRUE(bypassed.result.ok());
  Serve(*cache, MakeRequest("normal", 1, &normal));
  EXPECT_FALSE(normal.answered) << "the bypassed answer was not stored";
  model_.ExecuteAll();
  EXPECT_EQ(cache->Stats().bypassed, 1u);
  EXPECT_EQ(stats_->Snapshot().inference_stats.cache_miss.count, 1u)
      << "a bypass is neither a hit nor a miss";
}

TEST_F(ResponseCacheTest, RefreshRecomputesAndReplacesTheStoredAnswer) {
  auto cache = MakeCache();
  Answer old_answer, refreshed, later;
  Serve(*cache, MakeRequest("old", 1, &old_answer));
  model_.ExecuteAll();
  model_.factor = 3;  // the model changed behind the cache
  auto request = MakeRequest("refresh", 1, &refreshed);
  request->parameters.Set(std::string(kCacheControlParameter), std::string("refresh"));
  Serve(*cache, std::move(request));
  EXPECT_FALSE(refreshed.answered) << "refresh skips the lookup";
  model_.ExecuteAll();
  Serve(*cache, MakeRequest("later", 1, &later));
  ASSERT_TRUE(IsHit(later));
  EXPECT_EQ(later.result->outputs[0].tensor.values<float>()[0], 3.0f);
  EXPECT_EQ(cache->Stats().refreshed, 1u);
}

TEST_F(ResponseCacheTest, UnknownCacheControlIsRejected) {
  auto cache = MakeCache();
  Answer answer;
  auto request = MakeRequest("bad", 1, &answer);
  request->parameters.Set(std::string(kCacheControlParameter), std::string("sometimes"));
  Serve(*cache, std::move(request));
  ASSERT_TRUE(answer.answered);
  EXPECT_EQ(answer.result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(model_.runs(), 0);
  Parameters wrong_type;
  wrong_type.Set(std::string(kCacheControlParameter), true);
  EXPECT_FALSE(ParseCacheControl(wrong_type).ok());
}

TEST_F(ResponseCacheTest, ErrorsAreNeverCached) {
  auto cache = MakeCache();
  Answer failed, retried;
  Serve(*cache, MakeRequest("f", 1, &failed));
  model_.ExecuteAll(absl::InternalError("backend crashed"));
  ASSERT_FALSE(failed.result.ok());
  Serve(*cache, MakeRequest("r", 1, &retried));
  EXPECT_FALSE(retried.answered);
  EXPECT_EQ(model_.runs(), 2);
  model_.ExecuteAll();
  EXPECT_TRUE(retried.result.ok());
}

TEST_F(ResponseCacheTest, IdenticalRequestsInFlightRunOnceAndAllGetTheAnswer) {
  auto cache = MakeCache();
  std::vector<Answer> answers(5);
  for (size_t i = 0; i < answers.size(); ++i) {
    Serve(*cache, MakeRequest(StrCat("r", i), 1, &answers[i]));
  }
  EXPECT_EQ(model_.runs(), 1);
  model_.ExecuteAll();
  for (size_t i = 0; i < answers.size(); ++i) {
    ASSERT_TRUE(answers[i].result.ok()) << i;
    EXPECT_EQ(answers[i].result->id, StrCat("r", i));
    EXPECT_FALSE(IsHit(answers[i])) << "computed for this wave, not served from the cache";
  }
  EXPECT_EQ(cache->Stats().coalescer.followers, 4u);
  Answer after;
  Serve(*cache, MakeRequest("after", 1, &after));
  EXPECT_TRUE(IsHit(after));
}

TEST_F(ResponseCacheTest, FollowersOfACancelledLeaderRunAgain) {
  auto cache = MakeCache();
  Answer leader, follower;
  Serve(*cache, MakeRequest("leader", 1, &leader));
  Serve(*cache, MakeRequest("follower", 1, &follower));
  ASSERT_EQ(model_.runs(), 1);
  model_.ExecuteAll(absl::CancelledError("leader's client disconnected"));
  EXPECT_EQ(leader.result.status().code(), absl::StatusCode::kCancelled);
  EXPECT_FALSE(follower.answered);
  EXPECT_EQ(model_.runs(), 2) << "the follower was handed back and runs itself";
  model_.ExecuteAll();
  EXPECT_TRUE(follower.result.ok());
}

TEST_F(ResponseCacheTest, WithoutCoalescingEveryMissRuns) {
  auto cache = MakeCache(With([](ResponseCacheOptions& o) { o.coalesce = false; }));
  std::vector<Answer> answers(3);
  for (size_t i = 0; i < answers.size(); ++i) {
    Serve(*cache, MakeRequest(StrCat("r", i), 1, &answers[i]));
  }
  EXPECT_EQ(model_.runs(), 3);
  model_.ExecuteAll();
}

TEST_F(ResponseCacheTest, RetainVersionsDropsOldVersionsOnly) {
  auto cache = MakeCache();
  Answer v1, v2, v1_again, v2_again;
  Serve(*cache, MakeRequest("v1", 1, &v1), 1);
  Serve(*cache, MakeRequest("v2", 1, &v2), 2);
  EXPECT_EQ(model_.runs(), 2) << "the version is part of the key";
  model_.ExecuteAll();
  const std::vector<int64_t> served = {2};
  EXPECT_EQ(cache->RetainVersions(served), 1u);
  Serve(*cache, MakeRequest("v2 again", 1, &v2_again), 2);
  EXPECT_TRUE(IsHit(v2_again));
  Serve(*cache, MakeRequest("v1 again", 1, &v1_again), 1);
  EXPECT_FALSE(v1_again.answered);
  model_.ExecuteAll();
}

TEST_F(ResponseCacheTest, AnAnswerComputedBeforeAnInvalidationIsNotStoredAfterIt) {
  auto cache = MakeCache();
  Answer before, after;
  Serve(*cache, MakeRequest("before", 1, &before));
  // Invalidated while the model is still computing: the answer it finishes with predates the
  // invalidation and must not be stored.
  cache->DropAll();
  model_.ExecuteAll();
  EXPECT_TRUE(before.result.ok());
  Serve(*cache, MakeRequest("after", 1, &after));
  EXPECT_FALSE(after.answered) << "a miss: the model runs again";
  model_.ExecuteAll();
  EXPECT_FALSE(IsHit(after));
  // The same for a version's invalidation.
  Answer v1, v1_again;
  Serve(*cache, MakeRequest("v1", 7, &v1));
  cache->DropVersion(1);
  model_.ExecuteAll();
  Serve(*cache, MakeRequest("v1 again", 7, &v1_again));
  EXPECT_FALSE(v1_again.answered);
  model_.ExecuteAll();
}

// Time that runs a test's step the next time it is read: the memory tier reads the clock just
// before it locks a shard to insert, so the step lands between the cache's own check for
// invalidations and the insert.
class ClockWithStep final : public Clock {
 public:
  int64_t NowNs() const override {
    if (std::function<void()> step = std::exchange(step_, nullptr)) step();
    return time_.NowNs();
  }
  void RunOnNextRead(std::function<void()> step) { step_ = std::move(step); }

 private:
  FakeClock time_;
  mutable std::function<void()> step_;
};

TEST(ResponseCacheRaceTest, AnInvalidationThatLandsDuringTheStoreStillWins) {
  ClockWithStep clock;
  QueueModel model;
  auto cache = *ResponseCache::Create("m", ResponseCacheOptions{}, {}, &clock);
  Answer first, again;
  cache->Serve(MakeRequest("first", 1, &first), 1, "", nullptr, model.Runner(cache.get()));
  clock.RunOnNextRead([&cache] { cache->DropAll(); });
  model.ExecuteAll();
  ASSERT_TRUE(first.result.ok());
  cache->Serve(MakeRequest("again", 1, &again), 1, "", nullptr, model.Runner(cache.get()));
  EXPECT_FALSE(again.answered) << "the answer stored across the invalidation was served";
  model.ExecuteAll();
  EXPECT_FALSE(IsHit(again));
  EXPECT_EQ(cache->Stats().memory.rejected_stale, 1u);
}

TEST_F(ResponseCacheTest, CachedAnswerIsACopyTheBackendCannotChange) {
  auto cache = MakeCache();
  Answer first, second;
  Serve(*cache, MakeRequest("first", 1, &first));
  model_.ExecuteAll();
  ASSERT_TRUE(first.result.ok());
  // The backend (or a batch slice) writes into the buffer it answered with.
  first.result->outputs[0].tensor.mutable_values<float>()[0] = -1;
  Serve(*cache, MakeRequest("second", 1, &second));
  ASSERT_TRUE(IsHit(second));
  EXPECT_EQ(second.result->outputs[0].tensor.values<float>()[0], 2.0f);
}

TEST_F(ResponseCacheTest, MemoryBudgetBoundsTheEntries) {
  auto cache = MakeCache(With([](ResponseCacheOptions& o) {
    o.max_bytes = 4096;
    o.memory_shards = 1;
  }));
  for (int i = 0; i < 64; ++i) {
    Answer answer;
    Serve(*cache, MakeRequest("r", static_cast<float>(i), &answer));
    model_.ExecuteAll();
  }
  const ResponseCacheStats stats = cache->Stats();
  EXPECT_LE(stats.memory.bytes_used, 4096u);
  EXPECT_GT(stats.memory.evictions, 0u);
  EXPECT_EQ(stats.memory.entries + stats.memory.evictions, 64u);
}

TEST(ResponseCacheCreateTest, RedisTiersNeedARedis) {
  FakeClock clock;
  auto created = ResponseCache::Create(
      "m", With([](ResponseCacheOptions& o) { o.tier = Tier::kBoth; }), {}, &clock);
  ASSERT_FALSE(created.ok());
  // A build without Redis can never have one (redis_tier_none_test.cc checks its message).
  EXPECT_EQ(created.status().code(), RedisTier::InBuild() ? absl::StatusCode::kInvalidArgument
                                                          : absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(CheckTierInBuild("m", Tier::kMemory).ok());
  EXPECT_EQ(CheckTierInBuild("m", Tier::kRedis).ok(), RedisTier::InBuild());
  EXPECT_FALSE(
      ResponseCache::Create("m", With([](ResponseCacheOptions& o) { o.ttl_ms = 0; }), {}, &clock)
          .ok());
}

}  // namespace
}  // namespace brigade::cache
