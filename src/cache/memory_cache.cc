#include "cache/memory_cache.h"

#include <algorithm>
#include <bit>
#include <list>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

namespace brigade::cache {

class alignas(64) MemoryCache::Shard {
 public:
  struct Node {
    Hash128 id;
    int64_t version = 0;
    int64_t expires_at_ns = 0;
    size_t charge_bytes = 0;
    std::shared_ptr<const CachedEntry> entry;
  };
  using List = std::list<Node>;

  // Entries removed under the lock are handed back so their memory is freed after unlocking.
  using Released = std::vector<std::shared_ptr<const CachedEntry>>;

  void set_budget(size_t budget_bytes) { budget_bytes_ = budget_bytes; }
  size_t budget_bytes() const { return budget_bytes_; }

  std::shared_ptr<const CachedEntry> Lookup(const CacheKey& key, int64_t now_ns,
                                            Released* released) {
    absl::MutexLock lock(&mu_);
    auto it = index_.find(key.id);
    if (it == index_.end()) {
      ++stats_.misses;
      return nullptr;
    }
    List::iterator node = it->second;
    if (node->expires_at_ns <= now_ns) {
      ++stats_.expirations;
      ++stats_.misses;
      Remove(node, released);
      return nullptr;
    }
    const CachedEntry& entry = *node->entry;
    if (!key.Matches(entry.id, entry.check, entry.descriptor)) {
      ++stats_.collisions;
      ++stats_.misses;
      return nullptr;
    }
    lru_.splice(lru_.begin(), lru_, node);
    ++stats_.hits;
    return node->entry;
  }

  bool Insert(const CacheKey& key, std::shared_ptr<const CachedEntry> entry, int64_t expires_at_ns,
              int64_t now_ns, const InsertGuard* guard, Released* released) {
    const size_t charge = entry->charge_bytes();
    absl::MutexLock lock(&mu_);
    if (guard != nullptr && guard->counter->load(std::memory_order_acquire) != guard->expected) {
      ++stats_.rejected_stale;
      return false;
    }
    if (charge > budget_bytes_) {
      ++stats_.rejected_too_large;
      return false;
    }
    if (auto it = index_.find(key.id); it != index_.end()) Remove(it->second, released);
    lru_.push_front(Node{key.id, key.version, expires_at_ns, charge, std::move(entry)});
    index_.emplace(key.id, lru_.begin());
    bytes_used_ += charge;
    ++stats_.inserts;
    while (bytes_used_ > budget_bytes_) {
      List::iterator victim = std::prev(lru_.end());
      if (victim->expires_at_ns <= now_ns) {
        ++stats_.expirations;
      } else {
        ++stats_.evictions;
      }
      Remove(victim, released);
    }
    return true;
  }

  template <typename Predicate>
  size_t EraseIf(const Predicate& predicate, Released* released) {
    absl::MutexLock lock(&mu_);
    size_t erased = 0;
    for (auto it = lru_.begin(); it != lru_.end();) {
      auto next = std::next(it);
      if (predicate(it->version)) {
        Remove(it, released);
        ++erased;
      }
      it = next;
    }
    stats_.invalidated += erased;
    return erased;
  }

  void AddStats(MemoryTierStats* total) const {
    absl::MutexLock lock(&mu_);
    total->hits += stats_.hits;
    total->misses += stats_.misses;
    total->inserts += stats_.inserts;
    total->evictions += stats_.evictions;
    total->expirations += stats_.expirations;
    total->collisions += stats_.collisions;
    total->rejected_too_large += stats_.rejected_too_large;
    total->rejected_stale += stats_.rejected_stale;
    total->invalidated += stats_.invalidated;
    total->bytes_used += bytes_used_;
    total->entries += lru_.size();
  }

 private:
  void Remove(List::iterator node, Released* released) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    bytes_used_ -= node->charge_bytes;
    index_.erase(node->id);
    released->push_back(std::move(node->entry));
    lru_.erase(node);
  }

  mutable absl::Mutex mu_;
  absl::flat_hash_map<Hash128, List::iterator> index_ ABSL_GUARDED_BY(mu_);
  List lru_ ABSL_GUARDED_BY(mu_);  // front = most recently used
  size_t bytes_used_ ABSL_GUARDED_BY(mu_) = 0;
  MemoryTierStats stats_ ABSL_GUARDED_BY(mu_);
  size_t budget_bytes_ = 0;  // set before the cache is shared, then read-only
};

absl::StatusOr<std::unique_ptr<MemoryCache>> MemoryCache::Create(Options options) {
  if (options.max_bytes == 0) {
    return absl::InvalidArgumentError("memory cache needs max_bytes > 0");
  }
  if (options.clock == nullptr) return absl::InvalidArgumentError("memory cache needs a clock");
  const size_t shards = std::bit_ceil(static_cast<size_t>(std::max(1, options.shards)));
  return std::make_unique<MemoryCache>(ConstructionTag(), options, shards);
}

MemoryCache::MemoryCache(ConstructionTag, Options options, size_t shard_count)
    : options_(options),
      shard_mask_(shard_count - 1),
      shards_(std::make_unique<Shard[]>(shard_count)) {
  for (size_t i = 0; i < shard_count; ++i) shards_[i].set_budget(options_.max_bytes / shard_count);
}

MemoryCache::~MemoryCache() = default;

MemoryCache::Shard& MemoryCache::ShardFor(const Hash128& id) const {
  // The high half picks the shard; the hash map inside hashes the whole id again.
  return shards_[static_cast<size_t>(id.high >> 32) & shard_mask_];
}

std::shared_ptr<const CachedEntry> MemoryCache::Lookup(const CacheKey& key) {
  Shard::Released released;
  return ShardFor(key.id).Lookup(key, options_.clock->NowNs(), &released);
}

bool MemoryCache::Insert(const CacheKey& key, std::shared_ptr<const CachedEntry> entry,
                         int64_t ttl_ns, const InsertGuard* guard) {
  if (entry == nullptr || ttl_ns <= 0) return false;
  Shard::Released released;
  const int64_t now_ns = options_.clock->NowNs();
  return ShardFor(key.id).Insert(key, std::move(entry), now_ns + ttl_ns, now_ns, guard, &released);
}

template <typename Predicate>
size_t MemoryCache::EraseIf(Predicate predicate) {
  size_t erased = 0;
  for (size_t i = 0; i <= shard_mask_; ++i) {
    Shard::Released released;
    erased += shards_[i].EraseIf(predicate, &released);
  }
  return erased;
}

size_t MemoryCache::EraseVersion(int64_t version) {
  return EraseIf([version](int64_t v) { return v == version; });
}

size_t MemoryCache::EraseVersionsExcept(std::span<const int64_t> keep) {
  return EraseIf(
      [keep](int64_t v) { return std::find(keep.begin(), keep.end(), v) == keep.end(); });
}

size_t MemoryCache::Clear() {
  return EraseIf([](int64_t) { return true; });
}

MemoryTierStats MemoryCache::Stats() const {
  MemoryTierStats total;
  for (size_t i = 0; i <= shard_mask_; ++i) shards_[i].AddStats(&total);
  total.max_bytes = shards_[0].budget_bytes() * (shard_mask_ + 1);
  return total;
}

}  // namespace brigade::cache
