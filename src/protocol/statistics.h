#ifndef BRIGADE_PROTOCOL_STATISTICS_H_
#define BRIGADE_PROTOCOL_STATISTICS_H_

// Triton's statistics extension (GET /v2/models[/<name>[/versions/<v>]]/stats, gRPC
// ModelStatistics): one model version's cumulative counters, with Triton's field names and
// meaning (telemetry/model_stats.h says how the server fills each one), plus Brigade's per-stage
// latency percentiles and the failure split its metrics report. Plain value types shared by the
// server's encoders and the client's decoders; no behaviour.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "protocol/failure_reason.h"

namespace brigade::protocol {

// A cumulative count and the total time it took.
struct StatDuration {
  uint64_t count = 0;
  uint64_t ns = 0;
};

struct InferStatistics {
  StatDuration success, fail, queue, compute_input, compute_infer, compute_output, cache_hit,
      cache_miss;
};

struct BatchStatistics {
  uint64_t batch_size = 0;
  StatDuration compute_input, compute_infer, compute_output;
};

// Brigade's addition (`brigade_stage_latency`): quantiles of one stage of the request path since
// the process started, estimated from histogram buckets (NaN when count is 0).
struct StageLatency {
  std::string stage;  // "receive", "preprocess", ... (telemetry/latency_stage.h)
  uint64_t count = 0;
  double p50_ns = 0;
  double p90_ns = 0;
  double p99_ns = 0;
};

struct ModelStatistics {
  std::string name;
  std::string version;
  uint64_t last_inference_ms = 0;  // wall clock, ms since the Unix epoch; 0 = never
  uint64_t inference_count = 0;
  uint64_t execution_count = 0;
  InferStatistics inference_stats;
  // inference_stats.fail.count split by FailureReason (index = the enum's value); sums to it.
  // Triton reports the split as metrics (nv_inference_request_failure{reason}), not in the
  // statistics extension: encoders leave it out and decoders leave it zero.
  std::array<uint64_t, kNumFailureReasons> fail_by_reason{};
  std::vector<BatchStatistics> batch_stats;  // only sizes that ran, ascending
  // Empty when the version has served nothing (or the sender does not report it).
  std::vector<StageLatency> stage_latency;
};

}  // namespace brigade::protocol

#endif  // BRIGADE_PROTOCOL_STATISTICS_H_
