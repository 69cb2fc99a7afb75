#ifndef BRIGADE_TELEMETRY_MODEL_STATS_H_
#define BRIGADE_TELEMETRY_MODEL_STATS_H_

// ModelStats: the counters behind the statistics extension (Triton's field names and meaning)
// for one loaded model version.
//
//   success / fail   requests answered OK / with an error; ns = arrival (t0) to answer;
//                    failures also by reason (failure_reason.h: REJECTED, CANCELED, BACKEND,
//                    OTHER), for nv_inference_request_failure{reason}
//   queue            time from queue enter to leave (requests that reached the queue)
//   compute_input    batch assembly: gathering request tensors into the batch inputs
//   compute_infer    the backend's Execute
//   compute_output   slicing outputs back per request
//   cache_hit/miss   response-cache outcomes (count and lookup ns)
//   inference_count  batch rows executed; execution_count = backend executions
//   batch_stats      per executed batch size: executions and compute durations
//
// As in Triton, success and queue include cache hits; inference_count/execution_count don't.
// Every request in a batch is charged the batch's compute durations.
//
// Thread safety: all Record* methods are lock-free (relaxed atomics) and may be called from any
// thread; Snapshot() reads a consistent-enough view without stopping writers (each counter is
// read atomically, the set of counters is not a transaction, exactly like Triton's).

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "protocol/failure_reason.h"
#include "protocol/statistics.h"

namespace brigade::telemetry {

class ModelStats {
 public:
  // `max_batch_size` bounds the batch_stats table (0 means the model does not batch: size 1).
  ModelStats(std::string name, std::string version, int max_batch_size);

  void RecordSuccess(int64_t request_ns);
  void RecordFailure(protocol::FailureReason reason, int64_t request_ns);
  void RecordQueue(int64_t queue_ns);
  void RecordCacheHit(int64_t lookup_ns);
  void RecordCacheMiss(int64_t lookup_ns);
  // One backend execution of `batch_size` rows holding `requests` requests.
  void RecordExecution(int batch_size, int requests, int64_t input_ns, int64_t infer_ns,
                       int64_t output_ns);

  protocol::ModelStatistics Snapshot() const;

  const std::string& name() const { return name_; }
  const std::string& version() const { return version_; }

 private:
  struct Duration {
    std::atomic<uint64_t> count{0};
    std::atomic<uint64_t> ns{0};
    void Add(uint64_t n, int64_t duration_ns) {
      count.fetch_add(n, std::memory_order_relaxed);
      ns.fetch_add(static_cast<uint64_t>(duration_ns < 0 ? 0 : duration_ns) * n,
                   std::memory_order_relaxed);
    }
    protocol::StatDuration Read() const {
      return {count.load(std::memory_order_relaxed), ns.load(std::memory_order_relaxed)};
    }
  };
  struct BatchRow {
    Duration input, infer, output;
  };

  const std::string name_;
  const std::string version_;
  std::atomic<uint64_t> last_inference_ms_{0};
  std::atomic<uint64_t> inference_count_{0};
  std::atomic<uint64_t> execution_count_{0};
  Duration success_, fail_, queue_, compute_input_, compute_infer_, compute_output_, cache_hit_,
      cache_miss_;
  std::array<std::atomic<uint64_t>, protocol::kNumFailureReasons> fail_by_reason_{};
  // Index = batch size; sized max_batch_size + 1 at construction, never resized.
  std::unique_ptr<BatchRow[]> batches_;
  const int max_batch_size_;
};

}  // namespace brigade::telemetry

#endif  // BRIGADE_TELEMETRY_MODEL_STATS_H_
