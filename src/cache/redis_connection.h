#ifndef BRIGADE_CACHE_REDIS_CONNECTION_H_
#define BRIGADE_CACHE_REDIS_CONNECTION_H_

// RedisConnection: one non-blocking hiredis connection driven by an Asio io_context, that keeps
// itself connected. Internal to RedisClient.
//
// Behaviour:
//   - Start() dials; a dial that fails or does not complete within connect_timeout is retried
//     after a backoff that doubles from reconnect_min to reconnect_max (reset on success).
//     Any disconnect (server gone, read error, recycle) redials the same way until Shutdown().
//   - Send() writes one command and answers `done` exactly once: with the reply, with
//     DEADLINE_EXCEEDED when none arrived within command_timeout (a late reply is then
//     dropped), or with UNAVAILABLE when the connection is not ready, has max_pending commands
//     outstanding, or is lost before the reply (hiredis answers pending commands then).
//   - A command still unanswered by Redis recycle_after after it was sent means the link or
//     server is stuck (no FIN ever came): the connection is dropped and redialed.
//   - Subscriber mode (Subscribe() before Start()): on every (re)connect the connection sends
//     SUBSCRIBE <channel>; each message is handed to `on_message`, and `on_subscribed` runs when
//     Redis confirms a subscription (so the owner knows messages may have been missed before).
//
// Threading: every method, and every callback, runs on the io_context's thread. The object must
// outlive the io_context's run(): RedisClient calls Shutdown() on the io thread, lets run()
// return, and only then destroys it.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "boost/asio/io_context.hpp"
#include "boost/asio/steady_timer.hpp"
#include "cache/redis_reply.h"

struct redisAsyncContext;

namespace brigade::cache {

class RedisConnection {
 public:
  struct Options {
    std::string host = "127.0.0.1";
    int port = 6379;
    absl::Duration command_timeout = absl::Milliseconds(2);
    absl::Duration connect_timeout = absl::Milliseconds(200);
    absl::Duration reconnect_min = absl::Milliseconds(10);
    absl::Duration reconnect_max = absl::Seconds(1);
    size_t max_pending = 1024;
    absl::Duration recycle_after = absl::Seconds(1);
  };
  struct Hooks {
    std::function<void()> on_ready;  // connected (and, in subscriber mode, before SUBSCRIBE)
    std::function<void()> on_lost;   // the connection went away (after answering its commands)
  };

  RedisConnection(boost::asio::io_context& io, Options options, Hooks hooks);
  ~RedisConnection();

  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  void Subscribe(std::string channel, std::function<void(std::string_view)> on_message,
                 std::function<void()> on_subscribed);
  void Start();
  // Answers every outstanding command (UNAVAILABLE), closes, and stops redialing.
  void Shutdown();

  void Send(const std::vector<std::string>& argv, RedisCallback done);

  bool ready() const { return state_ == State::kReady; }
  // Commands written and not yet answered by Redis (including ones already timed out).
  size_t outstanding() const { return pending_.size(); }

 private:
  enum class State { kIdle, kConnecting, kReady, kShutDown };
  struct Pending {
    RedisCallback done;
    std::chrono::steady_clock::time_point sent;
    std::chrono::steady_clock::time_point deadline;
    bool answered = false;
  };

  static void OnConnect(const redisAsyncContext* context, int status);
  static void OnReply(redisAsyncContext* context, void* reply, void* privdata);
  static void OnSubscription(redisAsyncContext* context, void* reply, void* privdata);

  void Dial();
  void OnContextGone();
  void ScheduleRedial();
  void ArmTimer();
  void OnTimer();
  void Drop();

  boost::asio::io_context& io_;
  const Options options_;
  // options_' command_timeout and recycle_after for the timers, converted once: every command
  // uses them.
  const std::chrono::nanoseconds command_timeout_;
  const std::chrono::nanoseconds recycle_after_;
  const Hooks hooks_;
  State state_ = State::kIdle;
  redisAsyncContext* context_ = nullptr;  // owned by hiredis; null when not connected
  // Outstanding commands in the order Redis answers them. The first `timed_out_` were already
  // answered DEADLINE_EXCEEDED and wait only for their late reply.
  std::deque<std::unique_ptr<Pending>> pending_;
  size_t timed_out_ = 0;
  boost::asio::steady_timer command_timer_;
  bool command_timer_armed_ = false;
  std::chrono::steady_clock::time_point command_timer_at_;
  uint64_t command_timer_generation_ = 0;
  boost::asio::steady_timer dial_timer_;  // connect timeout, then redial backoff
  absl::Duration backoff_ = absl::ZeroDuration();
  uint64_t dial_generation_ = 0;

  std::string channel_;
  std::function<void(std::string_view)> on_message_;
  std::function<void()> on_subscribed_;
};

}  // namespace brigade::cache

#endif  // BRIGADE_CACHE_REDIS_CONNECTION_H_
