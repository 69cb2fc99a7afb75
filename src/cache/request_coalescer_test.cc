#include "cache/request_coalescer.h"

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"

namespace brigade::cache {
namespace {

// Collects what each request was answered with.
struct Answers {
  absl::Mutex mu;
  std::vector<std::pair<std::string, absl::StatusOr<InferResponse>>> got ABSL_GUARDED_BY(mu);

  size_t size() {
    absl::MutexLock lock(&mu);
    return got.size();
  }
};

std::unique_ptr<InferRequest> MakeRequest(std::string id, Answers* answers, float input = 1) {
  auto request = std::make_unique<InferRequest>();
  request->id = id;
  request->model_name = "m";
  request->inputs.push_back({"x", *Tensor::FromValues<float>({1}, std::vector<float>{input}), {}});
  request->clock.Mark(Stage::kArrival, 100);
  request->on_complete = [answers, id](absl::StatusOr<InferResponse> result) {
    if (answers == nullptr) return;
    absl::MutexLock lock(&answers->mu);
    answers->got.emplace_back(id, std::move(result));
  };
  return request;
}

CacheKey KeyFor(const InferRequest& request) {
  return KeyBuilder(KeyBuilder::Options{}).Build(request, 1, "");
}

// Admits `request` expecting it to lead, and answers it as its own run would (not recorded).
void AdmitLeader(RequestCoalescer& coalescer, const CacheKey& key,
                 std::unique_ptr<InferRequest> request) {
  RequestCoalescer::Admission admission = coalescer.Admit(key, std::move(request));
  ASSERT_EQ(admission.role, RequestCoalescer::Role::kLeader);
  admission.request->Complete(absl::InternalError("the leader's own answer"));
}

InferResponse ResponseFor(const InferRequest& request) {
  InferResponse response;
  response.model_name = "m";
  response.model_version = "1";
  response.id = request.id;
  response.outputs.push_back({"y", *Tensor::FromValues<float>({1}, std::vector<float>{2}), {}});
  response.clock = request.clock;
  response.clock.Mark(Stage::kInferStart, 200);
  response.clock.Mark(Stage::kInferEnd, 300);
  return response;
}

TEST(RequestCoalescerTest, ConcurrentIdenticalRequestsRunOnceAndAllGetTheAnswer) {
  RequestCoalescer coalescer({});
  Answers answers;
  constexpr int kRequests = 8;
  std::atomic<int> executions{0};
  std::vector<std::unique_ptr<InferRequest>> leaders;
  absl::Mutex leaders_mu;
  std::vector<std::thread> threads;
  for (int i = 0; i < kRequests; ++i) {
    threads.emplace_back([&, i] {
      auto request = MakeRequest("r" + std::to_string(i), &answers);
      const CacheKey key = KeyFor(*request);
      RequestCoalescer::Admission admission = coalescer.Admit(key, std::move(request));
      if (admission.role != RequestCoalescer::Role::kFollower) {
        executions.fetch_add(1);
        absl::MutexLock lock(&leaders_mu);
        leaders.push_back(std::move(admission.request));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  ASSERT_EQ(executions.load(), 1) << "identical requests in flight run the model once";
  ASSERT_EQ(answers.size(), 0u);

  // The leader finishes: its caller answers it, then reports the outcome.
  std::unique_ptr<InferRequest> leader = std::move(leaders[0]);
  const CacheKey key = KeyFor(*leader);
  InferResponse response = ResponseFor(*leader);
  leader->Complete(response);
  EXPECT_TRUE(coalescer.Complete(key, response).empty());

  absl::MutexLock lock(&answers.mu);
  ASSERT_EQ(answers.got.size(), static_cast<size_t>(kRequests));
  for (auto& [id, result] : answers.got) {
    ASSERT_TRUE(result.ok()) << id;
    EXPECT_EQ(result->id, id) << "each follower keeps its own id";
    EXPECT_EQ(result->outputs[0].tensor.values<float>()[0], 2.0f);
    EXPECT_EQ(result->clock.at(Stage::kArrival), 100);
    EXPECT_EQ(result->clock.at(Stage::kInferStart), 200) << "follower adopts the leader's run";
  }
  const CoalescerStats stats = coalescer.Stats();
  EXPECT_EQ(stats.leaders, 1u);
  EXPECT_EQ(stats.followers, static_cast<uint64_t>(kRequests - 1));
  EXPECT_EQ(stats.in_flight_keys, 0u);
}

TEST(RequestCoalescerTest, LeaderErrorIsFannedOutToFollowers) {
  RequestCoalescer coalescer({});
  Answers answers;
  auto leader = MakeRequest("leader", nullptr);
  const CacheKey key = KeyFor(*leader);
  AdmitLeader(coalescer, key, std::move(leader));
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(coalescer.Admit(key, MakeRequest("f" + std::to_string(i), &answers)).role,
              RequestCoalescer::Role::kFollower);
  }
  const absl::Status error = absl::InternalError("model 'm' failed");
  EXPECT_TRUE(coalescer.Complete(key, error).empty());
  absl::MutexLock lock(&answers.mu);
  ASSERT_EQ(answers.got.size(), 3u);
  for (auto& [id, result] : answers.got) EXPECT_EQ(result.status(), error) << id;
}

TEST(RequestCoalescerTest, LeadersOwnCancellationHandsFollowersBackToRunAgain) {
  RequestCoalescer coalescer({});
  Answers answers;
  auto leader = MakeRequest("leader", nullptr);
  const CacheKey key = KeyFor(*leader);
  AdmitLeader(coalescer, key, std::move(leader));
  ASSERT_EQ(coalescer.Admit(key, MakeRequest("f", &answers)).role,
            RequestCoalescer::Role::kFollower);
  std::vector<std::unique_ptr<InferRequest>> back =
      coalescer.Complete(key, absl::CancelledError("client went away"));
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0]->id, "f");
  EXPECT_EQ(answers.size(), 0u) << "the follower is not failed for the leader's cancellation";
  EXPECT_EQ(coalescer.Stats().handed_back, 1u);
  // Re-admitted, it becomes the new leader.
  RequestCoalescer::Admission again = coalescer.Admit(key, std::move(back[0]));
  EXPECT_EQ(again.role, RequestCoalescer::Role::kLeader);
  again.request->Complete(absl::InternalError("done"));
  coalescer.Complete(key, absl::InternalError("done"));
}

TEST(RequestCoalescerTest, FollowersPerKeyAreBounded) {
  RequestCoalescer coalescer({/*max_keys=*/16, /*max_followers_per_key=*/2, /*shards=*/1});
  Answers answers;
  auto leader = MakeRequest("leader", nullptr);
  const CacheKey key = KeyFor(*leader);
  AdmitLeader(coalescer, key, std::move(leader));
  EXPECT_EQ(coalescer.Admit(key, MakeRequest("f1", &answers)).role,
            RequestCoalescer::Role::kFollower);
  EXPECT_EQ(coalescer.Admit(key, MakeRequest("f2", &answers)).role,
            RequestCoalescer::Role::kFollower);
  RequestCoalescer::Admission third = coalescer.Admit(key, MakeRequest("f3", &answers));
  EXPECT_EQ(third.role, RequestCoalescer::Role::kUncoalesced);
  ASSERT_NE(third.request, nullptr) << "an uncoalesced request comes back to run on its own";
  third.request->Complete(absl::InternalError("ran alone"));
  coalescer.Complete(key, absl::InternalError("x"));
  EXPECT_EQ(coalescer.Stats().uncoalesced, 1u);
}

TEST(RequestCoalescerTest, KeysInFlightAreBounded) {
  RequestCoalescer coalescer({/*max_keys=*/2, /*max_followers_per_key=*/8, /*shards=*/1});
  Answers answers;
  std::vector<CacheKey> keys;
  for (int i = 0; i < 3; ++i) {
    auto request = MakeRequest("r" + std::to_string(i), &answers, static_cast<float>(i));
    keys.push_back(KeyFor(*request));
    RequestCoalescer::Admission admission = coalescer.Admit(keys.back(), std::move(request));
    EXPECT_EQ(admission.role,
              i < 2 ? RequestCoalescer::Role::kLeader : RequestCoalescer::Role::kUncoalesced);
    if (admission.request != nullptr) admission.request->Complete(absl::InternalError("x"));
  }
  for (int i = 0; i < 2; ++i) coalescer.Complete(keys[i], absl::InternalError("x"));
  EXPECT_EQ(coalescer.Stats().in_flight_keys, 0u);
}

Hash128 SameId(const CacheKey&) { return {1, 1}; }

TEST(RequestCoalescerTest, RequestsWithCollidingIdsAreNotCoalesced) {
  RequestCoalescer coalescer({});
  Answers answers;
  KeyBuilder colliding(KeyBuilder::Options{{}, &SameId});
  auto a = MakeRequest("a", &answers, 1);
  auto b = MakeRequest("b", &answers, 2);
  const CacheKey ka = colliding.Build(*a, 1, "");
  const CacheKey kb = colliding.Build(*b, 1, "");
  ASSERT_EQ(ka.id, kb.id);
  AdmitLeader(coalescer, ka, std::move(a));
  RequestCoalescer::Admission other = coalescer.Admit(kb, std::move(b));
  EXPECT_EQ(other.role, RequestCoalescer::Role::kUncoalesced);
  other.request->Complete(absl::InternalError("x"));
  // Completing with the colliding key must not end the other request's flight.
  EXPECT_TRUE(coalescer.Complete(kb, absl::InternalError("x")).empty());
  EXPECT_EQ(coalescer.Stats().in_flight_keys, 1u);
  coalescer.Complete(ka, absl::InternalError("x"));
}

TEST(RequestCoalescerTest, DestroyingTheCoalescerAnswersWaitingFollowers) {
  Answers answers;
  {
    RequestCoalescer coalescer({});
    auto leader = MakeRequest("leader", nullptr);
    const CacheKey key = KeyFor(*leader);
    AdmitLeader(coalescer, key, std::move(leader));
    coalescer.Admit(key, MakeRequest("f", &answers));
  }
  absl::MutexLock lock(&answers.mu);
  ASSERT_EQ(answers.got.size(), 1u);
  EXPECT_EQ(answers.got[0].second.status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace brigade::cache
