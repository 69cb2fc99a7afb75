#include "tools/loadgen/server_breakdown.h"

namespace brigade::loadgen {
namespace {

void Add(const protocol::StatDuration& from, protocol::StatDuration* to) {
  to->count += from.count;
  to->ns += from.ns;
}

// Mean ns per count over the window; false when a counter went backwards.
bool MeanDelta(const protocol::StatDuration& before, const protocol::StatDuration& after,
               double* mean_ns) {
  if (after.count < before.count || after.ns < before.ns) return false;
  const uint64_t count = after.count - before.count;
  *mean_ns = count == 0 ? 0.0 : static_cast<double>(after.ns - before.ns) / count;
  return true;
}

}  // namespace

std::optional<protocol::ModelStatistics> SumModel(
    const std::vector<protocol::ModelStatistics>& stats, std::string_view model) {
  std::optional<protocol::ModelStatistics> sum;
  for (const protocol::ModelStatistics& entry : stats) {
    if (entry.name != model) continue;
    if (!sum.has_value()) {
      sum = protocol::ModelStatistics();
      sum->name = entry.name;
    }
    sum->inference_count += entry.inference_count;
    sum->execution_count += entry.execution_count;
    const protocol::InferStatistics& s = entry.inference_stats;
    protocol::InferStatistics& t = sum->inference_stats;
    Add(s.success, &t.success);
    Add(s.fail, &t.fail);
    Add(s.queue, &t.queue);
    Add(s.compute_input, &t.compute_input);
    Add(s.compute_infer, &t.compute_infer);
    Add(s.compute_output, &t.compute_output);
    Add(s.cache_hit, &t.cache_hit);
    Add(s.cache_miss, &t.cache_miss);
  }
  return sum;
}

std::optional<ServerBreakdown> ComputeBreakdown(const protocol::ModelStatistics& before,
                                                const protocol::ModelStatistics& after) {
  const protocol::InferStatistics& b = before.inference_stats;
  const protocol::InferStatistics& a = after.inference_stats;
  ServerBreakdown breakdown;
  if (a.success.count < b.success.count || a.fail.count < b.fail.count ||
      a.cache_hit.count < b.cache_hit.count || a.cache_miss.count < b.cache_miss.count ||
      after.execution_count < before.execution_count ||
      after.inference_count < before.inference_count) {
    return std::nullopt;
  }
  breakdown.requests = a.success.count - b.success.count;
  breakdown.failures = a.fail.count - b.fail.count;
  breakdown.cache_hits = a.cache_hit.count - b.cache_hit.count;
  breakdown.cache_misses = a.cache_miss.count - b.cache_miss.count;
  if (!MeanDelta(b.queue, a.queue, &breakdown.queue_ns) ||
      !MeanDelta(b.compute_input, a.compute_input, &breakdown.compute_input_ns) ||
      !MeanDelta(b.compute_infer, a.compute_infer, &breakdown.compute_infer_ns) ||
      !MeanDelta(b.compute_output, a.compute_output, &breakdown.compute_output_ns) ||
      !MeanDelta(b.success, a.success, &breakdown.request_ns)) {
    return std::nullopt;
  }
  breakdown.executions = after.execution_count - before.execution_count;
  if (breakdown.executions > 0) {
    breakdown.mean_batch_size =
        static_cast<double>(after.inference_count - before.inference_count) /
        static_cast<double>(breakdown.executions);
  }
  return breakdown;
}

}  // namespace brigade::loadgen
