#ifndef BRIGADE_CACHE_REQUEST_COALESCER_H_
#define BRIGADE_CACHE_REQUEST_COALESCER_H_

// RequestCoalescer: identical requests in flight at the same time run the model once.
//
// The first request for a key becomes the *leader*: the caller runs it as usual. Identical
// requests arriving while the leader runs become *followers*: the coalescer holds them (the
// caller does nothing more) and, when the caller reports the leader's outcome with Complete(),
// answers each follower with the same response (carrying the follower's own id, its own stage
// clock plus the leader's infer/postprocess stamps) or the same error.
//
// Errors that are the leader's own fate rather than the answer — CANCELLED (its client went away)
// and DEADLINE_EXCEEDED (its deadline passed) — are not fanned out: Complete() hands those
// followers back to the caller, which runs them again (typically the first becomes a new leader).
//
// Bounds (every structure here is bounded): at most `max_keys` keys in flight and
// `max_followers_per_key` followers per key. A request beyond either bound is returned as
// kUncoalesced and simply runs on its own; so is a request whose id equals an in-flight key's id
// while its descriptor or check digest differs (a hash collision is never coalesced).
//
// Protocol: for every kLeader admission the caller must call Complete(key, ...) exactly once;
// until then the key stays in flight. Callbacks (the followers' on_complete) run inside
// Complete(), on the caller's thread, never under a lock.
// Thread safety: all methods may be called from any thread; keys are spread over shards, each
// with its own mutex.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "cache/cache_key.h"
#include "core/infer_request.h"

namespace brigade::cache {

struct CoalescerStats {
  uint64_t leaders = 0;
  uint64_t followers = 0;    // requests answered (or re-run) without their own execution
  uint64_t uncoalesced = 0;  // ran alone because a bound was reached or ids collided
  uint64_t handed_back = 0;  // followers returned after the leader was cancelled/timed out
  uint64_t in_flight_keys = 0;
};

class RequestCoalescer {
 public:
  struct Options {
    size_t max_keys = 4096;
    size_t max_followers_per_key = 64;
    int shards = 16;  // rounded up to a power of two
  };

  enum class Role { kLeader, kFollower, kUncoalesced };
  struct Admission {
    Role role = Role::kUncoalesced;
    // The request back for kLeader and kUncoalesced (run it); null for kFollower (held here).
    std::unique_ptr<InferRequest> request;
  };

  explicit RequestCoalescer(Options options);
  ~RequestCoalescer();

  RequestCoalescer(const RequestCoalescer&) = delete;
  RequestCoalescer& operator=(const RequestCoalescer&) = delete;

  Admission Admit(const CacheKey& key, std::unique_ptr<InferRequest> request);

  // Ends the flight of `key` with the leader's outcome, answering its followers. Returns the
  // followers handed back (see the class comment); empty otherwise.
  std::vector<std::unique_ptr<InferRequest>> Complete(const CacheKey& key,
                                                      const absl::StatusOr<InferResponse>& result);

  CoalescerStats Stats() const;

  class Shard;

 private:
  Shard& ShardFor(const Hash128& id) const;

  const Options options_;
  const size_t shard_mask_;
  std::unique_ptr<Shard[]> shards_;
};

// True for errors that belong to one request rather than to its answer.
bool IsRequestSpecificError(const absl::Status& status);

}  // namespace brigade::cache

#endif  // BRIGADE_CACHE_REQUEST_COALESCER_H_
