#ifndef BRIGADE_TELEMETRY_METRIC_SHARD_H_
#define BRIGADE_TELEMETRY_METRIC_SHARD_H_

// Per-thread shard selection for metric cells that many threads update at once.
//
// A sharded cell keeps MetricShardCount() copies of its atomics, each on its own cache lines, and
// a thread always updates the copy ThisThreadMetricShard() names; readers sum the copies. Threads
// are dealt shards round-robin the first time they record, so up to MetricShardCount() threads
// never share a cache line and more threads share evenly. Updates stay relaxed atomics, so a
// shared shard is still correct, only slower.
//
// Thread safety: both functions are safe from any thread. The shard count is fixed the first time
// either is called and never changes.

#include <cstddef>

namespace brigade::telemetry {

// Upper bound on shards per cell (memory grows linearly with it).
inline constexpr int kMaxMetricShards = 16;

// The next power of two at or above the hardware thread count, capped at kMaxMetricShards.
int MetricShardCount();

namespace internal {
extern thread_local constinit int tl_metric_shard;
int AssignThreadMetricShard();
}  // namespace internal

// This thread's shard, in [0, MetricShardCount()).
inline int ThisThreadMetricShard() {
  const int shard = internal::tl_metric_shard;
  if (shard >= 0) [[likely]] {
    return shard;
  }
  return internal::AssignThreadMetricShard();
}

}  // namespace brigade::telemetry

#endif  // BRIGADE_TELEMETRY_METRIC_SHARD_H_
