#ifndef BRIGADE_CACHE_REDIS_CLIENT_H_
#define BRIGADE_CACHE_REDIS_CLIENT_H_

// RedisClient: a small asynchronous Redis client for the response cache, on hiredis 0.14 (no TLS,
// RESP2) and one Asio I/O thread of its own.
//
//   - A pool of `connections` command connections, used round-robin; each keeps itself
//     connected (redial with backoff; see redis_connection.h).
//   - Strict timeouts: a command not answered within `command_timeout` (default 2 ms) is
//     answered DEADLINE_EXCEEDED; the caller treats that as a cache miss.
//   - A circuit breaker in front of the pool: after consecutive failures (timeouts, lost or
//     missing connections) commands are refused at once with UNAVAILABLE, on the caller's
//     thread, until a probe succeeds. A Redis error reply is a reply, not a failure.
//   - Optional pub/sub: one more connection subscribes to `subscribe_channel` and hands each
//     message to `on_message`, resubscribing after every reconnect (`on_subscribed` then runs,
//     so the owner can account for messages missed while disconnected).
//
// Nothing here blocks a caller: Command() posts to the I/O thread, or answers at once when the
// breaker is open or the client is shutting down. Callbacks run on the I/O thread (or inline, on
// the caller's thread, for those immediate refusals); keep them short and never block in them.
// Bound: each connection holds at most `max_pending_per_connection` outstanding commands; past
// that, commands are answered UNAVAILABLE.
//
// Lifetime: Close() (or the destructor) answers every outstanding command (UNAVAILABLE), closes
// the connections and joins the I/O thread; commands after it are refused at once. Neither may
// run on the I/O thread, i.e. inside a callback. Owners whose callbacks use the client call
// Close() first, so the client is whole while the last callbacks run.
// Thread safety: Command(), Stats() and WaitReady() may be called from any thread.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cache/circuit_breaker.h"
#include "cache/redis_reply.h"
#include "cache/redis_stats.h"
#include "core/clock.h"

namespace brigade::cache {

class RedisClient {
 public:
  struct Options {
    std::string host = "127.0.0.1";
    int port = 6379;
    int connections = 2;
    absl::Duration command_timeout = absl::Milliseconds(2);
    absl::Duration connect_timeout = absl::Milliseconds(200);
    absl::Duration reconnect_min = absl::Milliseconds(10);
    absl::Duration reconnect_max = absl::Seconds(1);
    size_t max_pending_per_connection = 1024;
    // A command still unanswered this long marks its connection stuck: it is redialed.
    absl::Duration recycle_after = absl::Seconds(1);
    CircuitBreaker::Options breaker;
    // Pub/sub (optional). Callbacks run on the I/O thread.
    std::string subscribe_channel;
    std::function<void(std::string_view message)> on_message;
    std::function<void()> on_subscribed;
    // Breaker time. Borrowed; must outlive the client.
    const Clock* clock = Clock::Real();
  };

  // INVALID_ARGUMENT for a bad option. Succeeds even when Redis is down (it keeps dialing).
  static absl::StatusOr<std::unique_ptr<RedisClient>> Create(Options options);
  ~RedisClient();

  RedisClient(const RedisClient&) = delete;
  RedisClient& operator=(const RedisClient&) = delete;

  // Sends one command (binary-safe arguments); `done` is called exactly once.
  void Command(std::vector<std::string> argv, RedisCallback done);

  // Waits up to `timeout` until every command connection is connected and, with a channel,
  // the subscription is confirmed. For start-up and tests; never on a request path.
  bool WaitReady(absl::Duration timeout) const;

  // See the lifetime note above. Idempotent.
  void Close();

  RedisClientStats Stats() const;
  const Options& options() const;

  class Impl;
  struct ConstructionTag {
   private:
    friend class RedisClient;
    ConstructionTag() = default;
  };
  RedisClient(ConstructionTag, std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace brigade::cache

#endif  // BRIGADE_CACHE_REDIS_CLIENT_H_
