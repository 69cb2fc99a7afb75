#ifndef BRIGADE_TELEMETRY_REQUEST_METRICS_H_
#define BRIGADE_TELEMETRY_REQUEST_METRICS_H_

// RequestMetrics: the standard Brigade request metrics, defined in one place.
//
//   brigade_requests_total{model,version,protocol,outcome}            counter
//       outcome: success | error | rejected (queue full, not ready, draining) | timed_out
//                | shed (dropped by load shedding) | cancelled
//   brigade_request_stage_duration_seconds{model,version,protocol,stage}  histogram
//       stage: receive | preprocess | queue | compute | postprocess | send | total
//       (definitions in latency_stage.h; 100 ns … 10 s buckets)
//   brigade_batch_size{model,version}                                 histogram (rows/execution)
//   brigade_queue_length{model,version}                               gauge
//   brigade_requests_in_flight{model,version}                         gauge
//   brigade_instances_busy{model,version}                             gauge
//
// Response-cache hits and misses are the cache's own families (brigade_response_cache_*, see
// cache/cache_metrics.h; per version: nv_cache_num_{hits,misses}_per_model), not counted here.
//
// Use: create the ModelRequestMetrics handle of each model version when it loads, with
// ForModel() (takes a mutex), and keep it beside the version's ModelStats; every Record* on the
// handle is lock-free. Code that only has the names at hand (a transport finishing a request)
// finds the handle with Lookup() or records through RecordRequest(model, version, ...), both
// lock-free. Series for a protocol/outcome/stage are created on their first observation, so a
// scrape lists only what happened (plus the three gauges, created with the handle). Requests
// that never resolved to a model (unknown model, undecodable body) go to Unresolved(), whose
// model and version labels are empty.
//
// Thread safety: everything is safe from any thread. Ownership: handles are owned by this object
// and valid for its lifetime; the registry is borrowed and must outlive it.

#include <array>
#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "core/infer_request.h"
#include "core/stage_clock.h"
#include "protocol/statistics.h"
#include "telemetry/latency_stage.h"
#include "telemetry/metrics_registry.h"

namespace brigade::telemetry {

enum class RequestOutcome : uint8_t {
  kSuccess = 0,
  kError,
  kRejected,
  kTimedOut,
  kShed,
  kCancelled,
};
inline constexpr int kNumRequestOutcomes = 6;

std::string_view RequestOutcomeName(RequestOutcome outcome);

// OK → success; UNAVAILABLE, RESOURCE_EXHAUSTED → rejected; DEADLINE_EXCEEDED → timed_out;
// CANCELLED → cancelled; anything else → error. Load shedding is a decision, not a status code:
// the shedder passes kShed itself.
RequestOutcome OutcomeFromStatus(const absl::Status& status);

class RequestMetrics;

// The metrics of one model version. See RequestMetrics.
class ModelRequestMetrics {
 public:
  ModelRequestMetrics(const ModelRequestMetrics&) = delete;
  ModelRequestMetrics& operator=(const ModelRequestMetrics&) = delete;

  // One finished request: counts it under `outcome` and observes every stage whose stamps are
  // set (call after t5 is stamped, or once the request ended without a response).
  void RecordRequest(Protocol protocol, RequestOutcome outcome, const StageClock& clock);
  // One backend execution of `batch_size` rows.
  void RecordBatch(int batch_size);

  // Set or move these where the value changes: queue length on enqueue/dequeue, in-flight on
  // accept/answer, busy instances around Execute.
  Gauge& queue_length() { return *queue_length_; }
  Gauge& in_flight() { return *in_flight_; }
  Gauge& busy_instances() { return *busy_instances_; }
  const Gauge& queue_length() const { return *queue_length_; }

  // Every stage in LatencyStage order (the statistics extension's per-stage summary).
  std::vector<protocol::StageLatency> StageSummary() const;

  const std::string& model() const { return model_; }
  const std::string& version() const { return version_; }

  // Use RequestMetrics::ForModel.
  ModelRequestMetrics(const RequestMetrics* parent, std::string model, std::string version,
                      Gauge* queue_length, Gauge* in_flight, Gauge* busy_instances);

 private:
  Counter* RequestCounter(Protocol protocol, RequestOutcome outcome);
  Histogram* StageHistogram(Protocol protocol, LatencyStage stage);

  static constexpr int kProtocols = 3;

  const RequestMetrics* parent_;
  const std::string model_;
  const std::string version_;
  Gauge* const queue_length_;
  Gauge* const in_flight_;
  Gauge* const busy_instances_;
  // Resolved on first use (null until then); the registry keeps the cells alive.
  std::array<std::array<std::atomic<Counter*>, kNumRequestOutcomes>, kProtocols> requests_{};
  std::array<std::array<std::atomic<Histogram*>, kNumLatencyStages>, kProtocols> stages_{};
  std::atomic<Histogram*> batch_size_{nullptr};
};

class RequestMetrics {
 public:
  // Registers the families above in `registry`; fails (ALREADY_EXISTS) if they are there.
  static absl::StatusOr<std::unique_ptr<RequestMetrics>> Create(MetricsRegistry* registry);

  ~RequestMetrics();

  // The handle of one model version, created on first call. Takes a mutex: call at load time.
  ModelRequestMetrics* ForModel(std::string_view model, std::string_view version);
  // For requests that never resolved to a model version.
  ModelRequestMetrics* Unresolved() { return unresolved_.get(); }
  // The handle ForModel created for (model, version), or null; an empty `version` finds the
  // model's newest version (requests that failed before a version was chosen count there).
  // Lock-free (an atomic load and a hash lookup in an immutable table that ForModel republishes),
  // so it may run per request.
  ModelRequestMetrics* Lookup(std::string_view model, std::string_view version) const;

  // Lookup, then RecordRequest on the handle; a version without a handle (never loaded, or an
  // unknown model name) counts under Unresolved(), so client-chosen names never create series.
  void RecordRequest(std::string_view model, std::string_view version, Protocol protocol,
                     RequestOutcome outcome, const StageClock& clock);

  struct Families {
    CounterFamily* requests;
    HistogramFamily* stage_duration;
    HistogramFamily* batch_size;
    GaugeFamily* queue_length;
    GaugeFamily* in_flight;
    GaugeFamily* busy_instances;
  };
  const Families& families() const { return families_; }

  // Use Create().
  explicit RequestMetrics(Families families);

 private:
  class HandleTable;  // (model, version) → handle; immutable once published

  const Families families_;
  absl::Mutex mu_;
  std::map<std::pair<std::string, std::string>, std::unique_ptr<ModelRequestMetrics>> models_
      ABSL_GUARDED_BY(mu_);
  // Every table ever published (readers may still hold an older one; a table is small and there
  // is one per model version load).
  std::vector<std::unique_ptr<const HandleTable>> tables_ ABSL_GUARDED_BY(mu_);
  std::atomic<const HandleTable*> published_{nullptr};
  // The gauges of Unresolved(): never exposed (a request without a model has no queue).
  std::array<Gauge, 3> unresolved_gauges_;
  std::unique_ptr<ModelRequestMetrics> unresolved_;
};

}  // namespace brigade::telemetry

#endif  // BRIGADE_TELEMETRY_REQUEST_METRICS_H_
