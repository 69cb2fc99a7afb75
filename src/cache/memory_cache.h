#ifndef BRIGADE_CACHE_MEMORY_CACHE_H_
#define BRIGADE_CACHE_MEMORY_CACHE_H_

// MemoryCache: the in-process tier. A byte-budgeted LRU with a per-entry TTL, split into shards
// so concurrent lookups of different keys rarely meet on a lock.
//
// Structure: `shards` independent LRUs (a power of two), each a hash map from key id to a node of
// an intrusive recency list, guarded by its own mutex; a key's shard is chosen by its id. Lookup,
// Insert and eviction are O(1) (amortized); there is no cache-wide lock, and the counters live in
// the shards, read only by Stats().
//
// Budget: `max_bytes` is split evenly across the shards; an entry is charged
// CachedEntry::charge_bytes(). Inserting past a shard's budget evicts least recently used
// entries of that shard; an entry larger than one shard's budget (max_bytes / shards) is not
// stored. Expired entries are reclaimed when a lookup finds them or when eviction reaches them
// (counted as expirations, not evictions); until then they count in bytes_used.
//
// Correctness: an entry is returned only if CacheKey::Matches() accepts its id, check digest and
// full descriptor, so an id collision is a miss (counted in `collisions`), never another
// request's answer. Entries are immutable and shared: a returned entry stays valid however long
// the caller keeps it, even if it is evicted meanwhile.
//
// Time: expiry uses the injected Clock (tests step a FakeClock).
// Thread safety: every method may be called from any thread.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "absl/status/statusor.h"
#include "cache/cache_key.h"
#include "cache/cached_value.h"
#include "core/clock.h"

namespace brigade::cache {

struct MemoryTierStats {
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t inserts = 0;
  uint64_t evictions = 0;    // removed to make room (LRU)
  uint64_t expirations = 0;  // removed because their TTL had passed
  uint64_t collisions = 0;   // an entry with the same id but a different request
  uint64_t rejected_too_large = 0;
  uint64_t rejected_stale = 0;  // inserts an invalidation overtook (InsertGuard)
  uint64_t invalidated = 0;     // removed by Erase*/Clear
  uint64_t bytes_used = 0;
  uint64_t entries = 0;
  uint64_t max_bytes = 0;
};

class MemoryCache {
 public:
  struct Options {
    size_t max_bytes = size_t{64} << 20;
    // Rounded up to a power of two; at least 1.
    int shards = 16;
    // Borrowed; must outlive the cache.
    const Clock* clock = Clock::Real();
  };

  // INVALID_ARGUMENT when max_bytes is 0 or the clock is null.
  static absl::StatusOr<std::unique_ptr<MemoryCache>> Create(Options options);
  ~MemoryCache();

  MemoryCache(const MemoryCache&) = delete;
  MemoryCache& operator=(const MemoryCache&) = delete;

  // The entry answering `key`, or null (miss). A hit becomes the most recently used.
  std::shared_ptr<const CachedEntry> Lookup(const CacheKey& key);

  // A condition checked under the shard's lock: store only while `*counter` still equals
  // `expected`. An eraser that bumps the counter before it erases can then never miss an insert
  // that raced with it: either the insert sees the new count and stores nothing, or it locked the
  // shard first and the erase that follows removes what it stored.
  struct InsertGuard {
    const std::atomic<uint64_t>* counter = nullptr;
    uint64_t expected = 0;
  };

  // Stores `entry` as the answer to `key` for `ttl_ns` (> 0), replacing any entry with the same
  // id. False when nothing was stored: the entry is larger than a shard's budget, or `guard`
  // (optional) no longer holds.
  bool Insert(const CacheKey& key, std::shared_ptr<const CachedEntry> entry, int64_t ttl_ns,
              const InsertGuard* guard = nullptr);

  // Removes the entries of one version; of every version not in `keep`; or all. Return the
  // number removed. O(entries).
  size_t EraseVersion(int64_t version);
  size_t EraseVersionsExcept(std::span<const int64_t> keep);
  size_t Clear();

  MemoryTierStats Stats() const;

  class Shard;
  // Use Create(); the tag keeps construction inside this class.
  struct ConstructionTag {
   private:
    friend class MemoryCache;
    ConstructionTag() = default;
  };
  MemoryCache(ConstructionTag, Options options, size_t shard_count);

 private:
  template <typename Predicate>
  size_t EraseIf(Predicate predicate);
  Shard& ShardFor(const Hash128& id) const;

  const Options options_;
  const size_t shard_mask_;
  std::unique_ptr<Shard[]> shards_;
};

}  // namespace brigade::cache

#endif  // BRIGADE_CACHE_MEMORY_CACHE_H_
