#include "telemetry/model_stats.h"

#include <algorithm>

#include "core/clock.h"

namespace brigade::telemetry {

ModelStats::ModelStats(std::string name, std::string version, int max_batch_size)
    : name_(std::move(name)),
      version_(std::move(version)),
      batches_(std::make_unique<BatchRow[]>(static_cast<size_t>(std::max(1, max_batch_size)) + 1)),
      max_batch_size_(std::max(1, max_batch_size)) {}

void ModelStats::RecordSuccess(int64_t request_ns) { success_.Add(1, request_ns); }
void ModelStats::RecordFailure(protocol::FailureReason reason, int64_t request_ns) {
  fail_.Add(1, request_ns);
  fail_by_reason_[static_cast<size_t>(reason)].fetch_add(1, std::memory_order_relaxed);
}
void ModelStats::RecordQueue(int64_t queue_ns) { queue_.Add(1, queue_ns); }
void ModelStats::RecordCacheHit(int64_t lookup_ns) { cache_hit_.Add(1, lookup_ns); }
void ModelStats::RecordCacheMiss(int64_t lookup_ns) { cache_miss_.Add(1, lookup_ns); }

void ModelStats::RecordExecution(int batch_size, int requests, int64_t input_ns, int64_t infer_ns,
                                 int64_t output_ns) {
  const auto n = static_cast<uint64_t>(std::max(1, requests));
  compute_input_.Add(n, input_ns);
  compute_infer_.Add(n, infer_ns);
  compute_output_.Add(n, output_ns);
  inference_count_.fetch_add(static_cast<uint64_t>(std::max(1, batch_size)),
                             std::memory_order_relaxed);
  execution_count_.fetch_add(1, std::memory_order_relaxed);
  last_inference_ms_.store(static_cast<uint64_t>(WallNowNs() / 1'000'000),
                           std::memory_order_relaxed);
  const int row = std::clamp(batch_size, 1, max_batch_size_);
  batches_[row].input.Add(1, input_ns);
  batches_[row].infer.Add(1, infer_ns);
  batches_[row].output.Add(1, output_ns);
}

protocol::ModelStatistics ModelStats::Snapshot() const {
  protocol::ModelStatistics out;
  out.name = name_;
  out.version = version_;
  out.last_inference_ms = last_inference_ms_.load(std::memory_order_relaxed);
  out.inference_count = inference_count_.load(std::memory_order_relaxed);
  out.execution_count = execution_count_.load(std::memory_order_relaxed);
  out.inference_stats = {success_.Read(),       fail_.Read(),          queue_.Read(),
                         compute_input_.Read(), compute_infer_.Read(), compute_output_.Read(),
                         cache_hit_.Read(),     cache_miss_.Read()};
  for (int i = 0; i < protocol::kNumFailureReasons; ++i) {
    out.fail_by_reason[i] = fail_by_reason_[i].load(std::memory_order_relaxed);
  }
  for (int size = 1; size <= max_batch_size_; ++size) {
    const BatchRow& row = batches_[size];
    const protocol::StatDuration infer = row.infer.Read();
    if (infer.count == 0) continue;
    out.batch_stats.push_back(
        {static_cast<uint64_t>(size), row.input.Read(), infer, row.output.Read()});
  }
  return out;
}

}  // namespace brigade::telemetry
