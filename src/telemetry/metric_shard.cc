#include "telemetry/metric_shard.h"

#include <algorithm>
#include <atomic>
#include <thread>

namespace brigade::telemetry {
namespace internal {

thread_local constinit int tl_metric_shard = -1;

int AssignThreadMetricShard() {
  static std::atomic<unsigned> next_thread{0};
  const unsigned ordinal = next_thread.fetch_add(1, std::memory_order_relaxed);
  tl_metric_shard = static_cast<int>(ordinal & static_cast<unsigned>(MetricShardCount() - 1));
  return tl_metric_shard;
}

}  // namespace internal

int MetricShardCount() {
  static const int count = [] {
    const int threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    int shards = 1;
    while (shards < threads && shards < kMaxMetricShards) shards *= 2;
    return shards;
  }();
  return count;
}

}  // namespace brigade::telemetry
