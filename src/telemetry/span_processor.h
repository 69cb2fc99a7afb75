#ifndef BRIGADE_TELEMETRY_SPAN_PROCESSOR_H_
#define BRIGADE_TELEMETRY_SPAN_PROCESSOR_H_

// SpanProcessor: OpenTelemetry's batch span processor. Request threads Submit() the spans of a
// finished request; a background thread hands them to the SpanExporter in batches.
//
//   * Bounded: at most `max_queued_spans` wait; a request whose spans do not fit is dropped
//     whole and counted (brigade_trace_spans_dropped_total). Submit never waits for export.
//   * Batches of up to `max_export_batch_spans`, sent when full or `schedule_delay` after the
//     first span waits (OTel defaults 2048 / 512 / 5000 ms, as Triton's bsp_* settings).
//   * Flush(timeout) exports everything submitted so far (shutdown, tests); the destructor
//     exports what is queued and stops the thread.
//
// Metrics (when `registry` is given): brigade_trace_spans_exported_total,
// brigade_trace_spans_dropped_total, brigade_trace_export_failures_total.
//
// Thread safety: Submit, Flush and the counters are safe from any thread.
// Ownership: owns the exporter; the registry is borrowed and must outlive the processor.

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "telemetry/async_batch_worker.h"
#include "telemetry/metrics_registry.h"
#include "telemetry/span_data.h"
#include "telemetry/span_exporter.h"

namespace brigade::telemetry {

class SpanProcessor {
 public:
  struct Options {
    size_t max_queued_spans = 2048;
    size_t max_export_batch_spans = 512;
    absl::Duration schedule_delay = absl::Seconds(5);
    // Optional: where the processor's counters are registered.
    MetricsRegistry* registry = nullptr;
  };

  // INVALID_ARGUMENT for a null exporter or zero sizes; registry errors as they come.
  static absl::StatusOr<std::unique_ptr<SpanProcessor>> Create(
      Options options, std::unique_ptr<SpanExporter> exporter);

  // Queues one request's spans (all or none); false when dropped. Never blocks on export.
  bool Submit(std::vector<SpanData> spans);
  // Exports everything submitted before the call; false if `timeout` passed first.
  bool Flush(absl::Duration timeout);

  uint64_t dropped_spans() const { return worker_->dropped(); }
  uint64_t exported_spans() const { return exported_.load(std::memory_order_relaxed); }
  uint64_t failed_exports() const { return failed_.load(std::memory_order_relaxed); }

  // Use Create().
  SpanProcessor(Options options, std::unique_ptr<SpanExporter> exporter, Counter* exported,
                Counter* dropped, Counter* failures);

 private:
  void ExportBatch(std::vector<SpanData> batch);

  std::unique_ptr<SpanExporter> exporter_;  // used by the worker thread only
  Counter* const exported_counter_;         // each may be null
  Counter* const dropped_counter_;
  Counter* const failures_counter_;
  std::atomic<uint64_t> exported_{0};
  std::atomic<uint64_t> failed_{0};
  // Last: its thread runs ExportBatch, which uses the members above.
  std::unique_ptr<AsyncBatchWorker<SpanData>> worker_;
};

}  // namespace brigade::telemetry

#endif  // BRIGADE_TELEMETRY_SPAN_PROCESSOR_H_
