#ifndef BRIGADE_CACHE_REDIS_STATS_H_
#define BRIGADE_CACHE_REDIS_STATS_H_

// The Redis tier's counters as plain values: what RedisClient (one client's connections and
// breaker) and RedisTier (the whole tier) report, and what cache_metrics.h exports. Kept apart
// from the client so that the metrics and the tier's interface (redis_tier.h) read the same in
// a build without Redis, which compiles none of the client. Plain data; no behaviour.

#include <cstdint>

#include "cache/circuit_breaker.h"

namespace brigade::cache {

struct RedisClientStats {
  uint64_t commands = 0;           // accepted by the breaker and sent (or tried)
  uint64_t replies = 0;            // answered by Redis in time
  uint64_t timeouts = 0;           // DEADLINE_EXCEEDED
  uint64_t unavailable = 0;        // no connection, queue full, connection lost
  uint64_t rejected_open = 0;      // refused by the open circuit breaker
  uint64_t connects = 0;           // successful (re)connects, all connections
  uint64_t disconnects = 0;        // connections lost
  uint64_t messages = 0;           // pub/sub messages received
  uint64_t connections_ready = 0;  // command connections connected now
  bool subscribed = false;         // the subscriber connection is subscribed now
  CircuitBreaker::State breaker_state = CircuitBreaker::State::kClosed;
  uint64_t breaker_opens = 0;
};

struct RedisTierStats {
  uint64_t gets = 0;
  uint64_t hits = 0;
  uint64_t misses = 0;      // no such key
  uint64_t errors = 0;      // timeout, unavailable, open breaker, error reply
  uint64_t corrupt = 0;     // value failed to decode
  uint64_t mismatched = 0;  // value belongs to another request (collision)
  uint64_t expired = 0;     // value's own expiry passed (Redis had not dropped it yet)
  uint64_t sets = 0;
  uint64_t set_errors = 0;
  uint64_t set_too_large = 0;
  uint64_t invalidations_sent = 0;
  uint64_t invalidation_errors = 0;
  uint64_t invalidations_received = 0;
  uint64_t malformed_messages = 0;
  uint64_t keys_deleted = 0;
  uint64_t resyncs = 0;
  RedisClientStats data;
  RedisClientStats control;
};

}  // namespace brigade::cache

#endif  // BRIGADE_CACHE_REDIS_STATS_H_
