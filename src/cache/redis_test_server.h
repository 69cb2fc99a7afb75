#ifndef BRIGADE_CACHE_REDIS_TEST_SERVER_H_
#define BRIGADE_CACHE_REDIS_TEST_SERVER_H_

// RedisTestServer: a real `redis-server` child process on a free loopback port, for tests and
// benchmarks. No persistence (no RDB/AOF files), bound to 127.0.0.1 only.
//
// The server is always stopped: Stop() and the destructor send SIGKILL to a still-running child
// (after SIGCONT, in case it was paused) and reap it, so a failing test never leaks a server.
// Kill(), Pause()/Resume() and Start() again on the same port let tests simulate a Redis that
// dies, hangs or comes back.
//
// Failure: Start() returns UNAVAILABLE when redis-server is missing or does not accept
// connections within the timeout. Not thread-safe; used from the test's main thread.

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cache/redis_reply.h"

namespace brigade::cache {

class RedisTestServer {
 public:
  // Picks a free port and starts the server.
  static absl::StatusOr<std::unique_ptr<RedisTestServer>> Start();
  ~RedisTestServer();

  RedisTestServer(const RedisTestServer&) = delete;
  RedisTestServer& operator=(const RedisTestServer&) = delete;

  int port() const { return port_; }
  bool running() const { return pid_ > 0; }

  // SIGKILL + reap: Redis vanishes without a goodbye (connections reset).
  void Kill();
  // SIGSTOP / SIGCONT: Redis keeps its connections but stops answering.
  void Pause();
  void Resume();
  // Starts the server again on the same port (after Kill()).
  absl::Status Restart();

  // Runs one command over a fresh blocking connection (test set-up and inspection).
  absl::StatusOr<RedisReply> Run(const std::vector<std::string>& argv) const;

  explicit RedisTestServer(int port) : port_(port) {}

 private:
  absl::Status Launch();

  const int port_;
  pid_t pid_ = -1;
  bool paused_ = false;
};

}  // namespace brigade::cache

#endif  // BRIGADE_CACHE_REDIS_TEST_SERVER_H_
