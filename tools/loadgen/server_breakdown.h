#ifndef BRIGADE_TOOLS_LOADGEN_SERVER_BREAKDOWN_H_
#define BRIGADE_TOOLS_LOADGEN_SERVER_BREAKDOWN_H_

// ServerBreakdown: where a request's time went *inside the server* during a measurement window,
// from two snapshots of the statistics extension (before and after). The extension's counters are
// cumulative (count, total ns), so the difference divided by the difference in count is the mean
// per request over the window, for any Triton-compatible server:
//
//   queue           waiting in the scheduler queue
//   compute_input   gathering inputs into the batch
//   compute_infer   the backend's execution (each request of a batch is charged the whole batch)
//   compute_output  scattering outputs back per request
//   request         the server's own arrival → answer time (success.ns)
//   cache           response-cache hits and misses (cache_hit / cache_miss counts) and the hit
//                   rate hits / (hits + misses); zero when the model has no cache
//
// compute = compute_input + compute_infer + compute_output is what the model costs; the rest of
// the client's end-to-end latency (client encode/decode, network, protocol handling, queueing) is
// serving overhead. The statistics give means only, so "overhead at p99" is end-to-end p99 minus
// the mean compute.
//
// Pure functions over protocol::ModelStatistics; every version of the model is summed.

#include <optional>
#include <string_view>
#include <vector>

#include "tools/client/client_types.h"

namespace brigade::loadgen {

struct ServerBreakdown {
  // Requests the server answered successfully in the window.
  uint64_t requests = 0;
  uint64_t failures = 0;
  // Means per request, ns.
  double queue_ns = 0;
  double compute_input_ns = 0;
  double compute_infer_ns = 0;
  double compute_output_ns = 0;
  double request_ns = 0;
  // Backend executions in the window and the mean rows per execution (0 when none).
  uint64_t executions = 0;
  double mean_batch_size = 0;
  // Response-cache lookups in the window by outcome.
  uint64_t cache_hits = 0;
  uint64_t cache_misses = 0;

  uint64_t cache_lookups() const { return cache_hits + cache_misses; }
  // 0 when there was no lookup.
  double cache_hit_rate() const {
    return cache_lookups() == 0
               ? 0.0
               : static_cast<double>(cache_hits) / static_cast<double>(cache_lookups());
  }

  double compute_ns() const { return compute_input_ns + compute_infer_ns + compute_output_ns; }
};

// Sums the entries of `stats` whose name is `model` into one (all versions).
std::optional<protocol::ModelStatistics> SumModel(
    const std::vector<protocol::ModelStatistics>& stats, std::string_view model);

// The window's breakdown. A counter that went backwards (the model was reloaded, resetting its
// statistics) yields nullopt: the window cannot be attributed.
std::optional<ServerBreakdown> ComputeBreakdown(const protocol::ModelStatistics& before,
                                                const protocol::ModelStatistics& after);

}  // namespace brigade::loadgen

#endif  // BRIGADE_TOOLS_LOADGEN_SERVER_BREAKDOWN_H_
