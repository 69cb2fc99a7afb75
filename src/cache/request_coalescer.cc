#include "cache/request_coalescer.h"

#include <algorithm>
#include <bit>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

namespace brigade::cache {
namespace {

struct Flight {
  CacheKey key;
  std::vector<std::unique_ptr<InferRequest>> followers;
};

// Copies the leader's execution stamps into a follower's clock: the follower waited for them.
void AdoptExecutionStamps(const StageClock& leader, StageClock* follower) {
  for (Stage stage : {Stage::kInferStart, Stage::kInferEnd, Stage::kPostprocessed}) {
    if (leader.has(stage)) follower->Mark(stage, leader.at(stage));
  }
}

}  // namespace

class alignas(64) RequestCoalescer::Shard {
 public:
  absl::Mutex mu;
  absl::flat_hash_map<Hash128, Flight> flights ABSL_GUARDED_BY(mu);
  CoalescerStats stats ABSL_GUARDED_BY(mu);
  size_t max_keys = 0;
};

bool IsRequestSpecificError(const absl::Status& status) {
  return status.code() == absl::StatusCode::kCancelled ||
         status.code() == absl::StatusCode::kDeadlineExceeded;
}

RequestCoalescer::RequestCoalescer(Options options)
    : options_(options),
      shard_mask_(std::bit_ceil(static_cast<size_t>(std::max(1, options.shards))) - 1),
      shards_(std::make_unique<Shard[]>(shard_mask_ + 1)) {
  const size_t per_shard = std::max<size_t>(1, options_.max_keys / (shard_mask_ + 1));
  for (size_t i = 0; i <= shard_mask_; ++i) shards_[i].max_keys = per_shard;
}

RequestCoalescer::~RequestCoalescer() {
  // Followers still held here were never answered; answer them rather than drop them.
  for (size_t i = 0; i <= shard_mask_; ++i) {
    absl::flat_hash_map<Hash128, Flight> flights;
    {
      absl::MutexLock lock(&shards_[i].mu);
      flights.swap(shards_[i].flights);
    }
    for (auto& [id, flight] : flights) {
      for (auto& follower : flight.followers) {
        follower->Complete(absl::UnavailableError(
            "response cache shut down before the identical request it waited for finished"));
      }
    }
  }
}

RequestCoalescer::Shard& RequestCoalescer::ShardFor(const Hash128& id) const {
  return shards_[static_cast<size_t>(id.low >> 32) & shard_mask_];
}

RequestCoalescer::Admission RequestCoalescer::Admit(const CacheKey& key,
                                                    std::unique_ptr<InferRequest> request) {
  Shard& shard = ShardFor(key.id);
  absl::MutexLock lock(&shard.mu);
  auto it = shard.flights.find(key.id);
  if (it == shard.flights.end()) {
    if (shard.flights.size() >= shard.max_keys) {
      ++shard.stats.uncoalesced;
      return {Role::kUncoalesced, std::move(request)};
    }
    shard.flights.emplace(key.id, Flight{key, {}});
    ++shard.stats.leaders;
    return {Role::kLeader, std::move(request)};
  }
  Flight& flight = it->second;
  if (!(flight.key == key) || flight.followers.size() >= options_.max_followers_per_key) {
    ++shard.stats.uncoalesced;
    return {Role::kUncoalesced, std::move(request)};
  }
  flight.followers.push_back(std::move(request));
  ++shard.stats.followers;
  return {Role::kFollower, nullptr};
}

std::vector<std::unique_ptr<InferRequest>> RequestCoalescer::Complete(
    const CacheKey& key, const absl::StatusOr<InferResponse>& result) {
  std::vector<std::unique_ptr<InferRequest>> followers;
  Shard& shard = ShardFor(key.id);
  const bool hand_back = !result.ok() && IsRequestSpecificError(result.status());
  {
    absl::MutexLock lock(&shard.mu);
    auto it = shard.flights.find(key.id);
    if (it == shard.flights.end() || !(it->second.key == key)) return {};
    followers = std::move(it->second.followers);
    shard.flights.erase(it);
    if (hand_back) shard.stats.handed_back += followers.size();
  }
  if (hand_back) return followers;
  for (std::unique_ptr<InferRequest>& follower : followers) {
    if (!result.ok()) {
      follower->Complete(result.status());
      continue;
    }
    InferResponse response = *result;
    response.id = follower->id;
    AdoptExecutionStamps(result->clock, &follower->clock);
    response.clock = follower->clock;
    follower->Complete(std::move(response));
  }
  return {};
}

CoalescerStats RequestCoalescer::Stats() const {
  CoalescerStats total;
  for (size_t i = 0; i <= shard_mask_; ++i) {
    // One name for the shard and no alias of its fields, so the thread-safety analysis sees that
    // the lock taken guards what is read (it equates neither two operator[] calls nor a
    // reference with the field it names).
    Shard& shard = shards_[i];
    absl::MutexLock lock(&shard.mu);
    total.leaders += shard.stats.leaders;
    total.followers += shard.stats.followers;
    total.uncoalesced += shard.stats.uncoalesced;
    total.handed_back += shard.stats.handed_back;
    total.in_flight_keys += shard.flights.size();
  }
  return total;
}

}  // namespace brigade::cache
