#ifndef BRIGADE_TOOLS_ANALYZE_SERVER_PROCESS_H_
#define BRIGADE_TOOLS_ANALYZE_SERVER_PROCESS_H_

// ServerProcess: a `brigade serve` child process on a model repository, for one sweep point.
//
// Start() runs `<binary> serve --model-repository <repo> --http-address 127.0.0.1
// --http-port 0 --allow-grpc false --exit-timeout-secs 2 <extra args>`, so the server takes a
// free port itself (no race between choosing a port and binding it) and reports it in its
// start-up log line ("HTTP ... listening on 127.0.0.1:<port>"), which this class reads from the
// child's output. Start() returns once the server answers ready on that port, or fails.
//
// The child's stdout and stderr go to a pipe that a reader thread drains (so the child never
// blocks on a full pipe); the last lines are kept for error messages.
//
// Stop() (and the destructor) sends SIGTERM, waits for the exit up to `stop_timeout_ms`, then
// SIGKILLs. The child is never left running.
//
// Thread safety: Start/Stop/address from one thread; the reader thread is internal.
// Failure: UNAVAILABLE when the server exits or does not become ready within
// `start_timeout_ms`, with its exit status and its last output lines; INTERNAL when the process
// cannot be spawned.

#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace brigade::analyze {

class ServerProcess {
 public:
  struct Options {
    // The `brigade` executable.
    std::string binary;
    std::string model_repository;
    // Appended to the serve command line (e.g. "--pin-threads=false").
    std::vector<std::string> extra_args;
    int64_t start_timeout_ms = 120'000;
    int64_t stop_timeout_ms = 10'000;
    // Sent with the readiness probes (a server started with --auth-token-file may guard its health
    // endpoints too); empty: none.
    std::string bearer_token;
    // Output lines kept for error messages.
    size_t tail_lines = 30;
  };

  static absl::StatusOr<std::unique_ptr<ServerProcess>> Start(const Options& options);

  ~ServerProcess();
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  // "127.0.0.1:<port>".
  std::string address() const;
  pid_t pid() const { return pid_; }

  // Stops the child (see above) and answers its exit description ("exit 0", "signal 9").
  std::string Stop();

  // The child's last output lines, joined.
  std::string OutputTail() const;

  // Use Start(); the key keeps construction inside this class while allowing make_unique.
  class Key {
    friend class ServerProcess;
    Key() = default;
  };
  ServerProcess(Key, const Options& options, pid_t pid, int read_fd);

 private:
  bool PortKnownOrOutputClosed() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return port_ > 0 || output_closed_;
  }

  void ReadOutput();
  // Waits for the port line (or the end of output) until `deadline_ms` (CLOCK_MONOTONIC ms).
  absl::Status AwaitPort(int64_t deadline_ms);
  absl::Status AwaitReady(int64_t deadline_ms);
  // Reaps the child if it has exited; true once reaped.
  bool Reap(bool block);

  const Options options_;
  const pid_t pid_;
  const int read_fd_;
  std::thread reader_;
  bool reaped_ = false;
  int wait_status_ = 0;

  mutable absl::Mutex mu_;
  std::deque<std::string> tail_ ABSL_GUARDED_BY(mu_);
  int port_ ABSL_GUARDED_BY(mu_) = 0;
  bool output_closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace brigade::analyze

#endif  // BRIGADE_TOOLS_ANALYZE_SERVER_PROCESS_H_
