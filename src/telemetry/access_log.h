#ifndef BRIGADE_TELEMETRY_ACCESS_LOG_H_
#define BRIGADE_TELEMETRY_ACCESS_LOG_H_

// AccessLog: an optional JSON-lines log of finished requests, one object per line:
//
//   {"time":"2024-05-01T12:00:00.123456Z","request_id":"r1","model":"resnet","version":"1",
//    "protocol":"http","status":"OK","code":200,"outcome":"success","batch_size":4,
//    "cache_hit":false,"trace_id":"4bf9…","receive_us":12.5,"preprocess_us":3.1,"queue_us":40,
//    "compute_us":812.25,"postprocess_us":2,"send_us":9.75,"total_us":879.6}
//
//   * time is when the request arrived (t0), UTC; stage durations follow latency_stage.h, in
//     microseconds, present only when measured; code is the protocol status the client saw
//     (HTTP status or gRPC code), when the caller gives it; trace_id only for traced requests.
//   * Sampled: each request is logged with probability `sample_rate`; failed requests always
//     when `log_errors`.
//   * Bounded and asynchronous: Record() copies the fields into a queue of at most
//     `max_queued_lines`; a background thread formats and appends them to the file. When the
//     queue is full the line is dropped and counted (dropped_lines()); Record never waits for
//     the disk.
//
// Thread safety: Record, Flush and the counters are safe from any thread.
// Failure: Create answers INVALID_ARGUMENT for a bad rate or an empty path, UNAVAILABLE when
// the file cannot be opened for append; write errors are counted (write_errors()).

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/clock.h"
#include "core/infer_request.h"
#include "core/stage_clock.h"
#include "telemetry/async_batch_worker.h"
#include "telemetry/trace_context.h"

namespace brigade::telemetry {

// What Record() is told about one finished request. Views are copied before Record returns.
struct AccessLogEntry {
  std::string_view request_id{};
  std::string_view model{};
  std::string_view version{};
  Protocol protocol = Protocol::kHttp;
  absl::Status status{};
  std::optional<int> protocol_code{};  // HTTP status or gRPC code sent to the client
  int batch_size = 0;                  // 0 = did not execute
  bool cache_hit = false;
  std::optional<TraceId> trace_id{};
  StageClock clock{};
};

class AccessLog {
 public:
  struct Options {
    std::string path{};
    double sample_rate = 1.0;
    bool log_errors = true;
    size_t max_queued_lines = 4096;
    // Lines are written at least this often (and whenever 256 are waiting).
    absl::Duration flush_interval = absl::Seconds(1);
    // The time base of the StageClock stamps, and the wall offset used for "time".
    const Clock* clock = Clock::Real();
    std::optional<int64_t> wall_offset_ns{};
  };

  static absl::StatusOr<std::unique_ptr<AccessLog>> Create(Options options);
  ~AccessLog();

  // Samples, then queues the entry; never blocks on the file. True when queued.
  bool Record(const AccessLogEntry& entry);
  // Writes everything recorded before the call; false if `timeout` passed first.
  bool Flush(absl::Duration timeout);

  uint64_t dropped_lines() const;
  uint64_t written_lines() const { return written_.load(std::memory_order_relaxed); }
  uint64_t write_errors() const { return write_errors_.load(std::memory_order_relaxed); }

  // The JSON line (without the newline) for an entry; exposed for tests.
  static std::string FormatLine(const AccessLogEntry& entry, int64_t wall_offset_ns);

  struct Line;  // an entry with its strings owned
  // Use Create().
  AccessLog(Options options, std::FILE* file, int64_t wall_offset_ns);

 private:
  void Write(std::vector<Line> lines);

  const Options options_;
  std::FILE* const file_;  // owned; used by the worker thread only
  const int64_t wall_offset_ns_;
  std::atomic<uint64_t> written_{0};
  std::atomic<uint64_t> write_errors_{0};
  std::unique_ptr<AsyncBatchWorker<Line>> worker_;  // last: its thread uses the members above
};

}  // namespace brigade::telemetry

#endif  // BRIGADE_TELEMETRY_ACCESS_LOG_H_
