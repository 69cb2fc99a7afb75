#ifndef BRIGADE_TOOLS_LOADGEN_BENCH_RUNNER_H_
#define BRIGADE_TOOLS_LOADGEN_BENCH_RUNNER_H_

// RunBench: the load generator behind `brigade bench`. For each load level (a concurrency in
// closed-loop mode, a request rate in open-loop mode) it
//   1. opens one client (one connection) per worker thread,
//   2. warms up (by time or request count; results discarded),
//   3. snapshots the server's statistics and the process's CPU time,
//   4. measures (by time or request count), each worker recording into its own histograms,
//   5. snapshots again, and reports latency percentiles, throughput, errors by kind, the server's
//      stage breakdown over the window (server_breakdown.h), and the client's own CPU cost per
//      request (process user+sys CPU over the window / requests; meaningful when the process runs
//      nothing but the benchmark), from which the request rate one core of client can sustain
//      follows.
// Inputs are built once from the model's metadata (input_data.h) and shared read-only by the
// workers; each worker cycles through the samples from its own offset, or draws each request's
// sample from a Zipf distribution over them (sample_order.h) with its own seeded generator.
//
// With SharedMemory::kSystem each worker's inputs live in a shared-memory region of its own,
// written once and registered over the worker's connection before the level, unregistered after
// it (also when the level fails); requests name it instead of carrying the tensors
// (shared_memory_inputs.h). Outputs still come back in the answer.
//
// Open-loop levels use `open_loop_workers` connections; a request due while all of them are busy
// waits for the first free one and its latency includes that wait (load_worker.h).
//
// Thread safety: RunBench blocks the calling thread; `progress` is called from it. Failure:
// INVALID_ARGUMENT for bad options, the client's error when the model's metadata cannot be read
// or a shared-memory region cannot be made, registered or unregistered; errors of individual
// requests are counted, not returned.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/clock.h"
#include "tools/client/client.h"
#include "tools/loadgen/input_data.h"
#include "tools/loadgen/latency_histogram.h"
#include "tools/loadgen/load_worker.h"
#include "tools/loadgen/sample_order.h"
#include "tools/loadgen/server_breakdown.h"
#include "tools/loadgen/shared_memory_inputs.h"

namespace brigade::loadgen {

enum class LoadMode { kClosedLoop, kConstantRate, kPoisson };

// How inputs reach the server: in the request, or in system shared memory (Triton's extension;
// client and server on one host).
enum class SharedMemory { kNone, kSystem };

// "closed", "constant", "poisson".
std::string_view LoadModeName(LoadMode mode);

struct BenchOptions {
  client::ClientOptions client;
  std::string model_name;
  std::string model_version;
  // HTTP: send inputs and ask for outputs with the binary tensor extension.
  bool http_binary = false;
  // Outputs to request; empty = all.
  std::vector<std::string> outputs;
  // Sent with every request (e.g. cache_control=bypass).
  Parameters request_parameters;
  SharedMemory shared_memory = SharedMemory::kNone;

  LoadMode mode = LoadMode::kClosedLoop;
  // Closed loop: one level per entry.
  std::vector<int> concurrency = {1};
  // Open loop: requests per second, one level per entry.
  std::vector<double> rates;
  int open_loop_workers = 32;

  // Warm-up and measurement: by count when the count is > 0, else by time.
  int64_t warmup_ms = 1'000;
  int64_t warmup_requests = 0;
  int64_t duration_ms = 5'000;
  int64_t requests = 0;

  InputOptions inputs;
  SampleOrder sample_order = SampleOrder::kCycle;
  // Zipf exponent s, for SampleOrder::kZipf.
  double zipf_exponent = 1.0;
  // Read the statistics extension before and after each window.
  bool server_stats = true;
  uint64_t seed = 1;

  const Clock* clock = Clock::Real();
  Waiter* waiter = Waiter::Real();
};

struct LevelResult {
  LoadMode mode = LoadMode::kClosedLoop;
  int workers = 0;
  // Open loop: the target rate (requests/s).
  double target_rate = 0;

  int64_t ok = 0;
  int64_t failed = 0;
  int64_t unsent = 0;
  ErrorsByKind errors;
  double elapsed_s = 0;
  double throughput_per_s = 0;
  LatencyHistogram latency;
  LatencyHistogram service;
  LatencyHistogram send_lag;

  std::optional<ServerBreakdown> server;
  // Why `server` is missing (statistics unsupported, disabled, model reloaded...).
  std::string server_note;

  // Process CPU time over the window per request issued, µs.
  double client_cpu_us_per_request = 0;
};

// What the progress line shows; `phase` is "warm-up" or "measure".
struct Progress {
  std::string level;
  std::string phase;
  double elapsed_s = 0;
  // Planned length when the phase is timed, 0 when it counts requests.
  double planned_s = 0;
  int64_t done = 0;
  int64_t planned_requests = 0;
  int64_t failed = 0;
};

class ProgressSink {
 public:
  virtual ~ProgressSink() = default;
  virtual void Update(const Progress& progress) = 0;
  // The level finished; the line can be cleared.
  virtual void Done() = 0;
};

struct BenchReport {
  protocol::ModelMetadata model;
  client::ClientProtocol protocol = client::ClientProtocol::kHttp;
  bool http_binary = false;
  SharedMemory shared_memory = SharedMemory::kNone;
  int64_t batch_size = 1;
  size_t samples = 0;
  SampleOrder sample_order = SampleOrder::kCycle;
  double zipf_exponent = 0;
  std::vector<LevelResult> levels;
};

absl::StatusOr<BenchReport> RunBench(const BenchOptions& options, ProgressSink* progress);

}  // namespace brigade::loadgen

#endif  // BRIGADE_TOOLS_LOADGEN_BENCH_RUNNER_H_
