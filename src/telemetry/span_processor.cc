#include "telemetry/span_processor.h"

#include "core/status_macros.h"

namespace brigade::telemetry {

absl::StatusOr<std::unique_ptr<SpanProcessor>> SpanProcessor::Create(
    Options options, std::unique_ptr<SpanExporter> exporter) {
  if (exporter == nullptr) return absl::InvalidArgumentError("span processor: no exporter");
  if (options.max_queued_spans == 0 || options.max_export_batch_spans == 0) {
    return absl::InvalidArgumentError(
        "span processor: max_queued_spans and max_export_batch_spans must be positive");
  }
  Counter* exported = nullptr;
  Counter* dropped = nullptr;
  Counter* failures = nullptr;
  if (options.registry != nullptr) {
    BRIGADE_ASSIGN_OR_RETURN(
        CounterFamily * exported_family,
        options.registry->AddCounter("brigade_trace_spans_exported_total",
                                     "Spans handed to the trace exporter successfully.", {}));
    BRIGADE_ASSIGN_OR_RETURN(
        CounterFamily * dropped_family,
        options.registry->AddCounter("brigade_trace_spans_dropped_total",
                                     "Spans dropped because the export buffer was full.", {}));
    BRIGADE_ASSIGN_OR_RETURN(
        CounterFamily * failures_family,
        options.registry->AddCounter("brigade_trace_export_failures_total",
                                     "Span batches the exporter failed to deliver.", {}));
    BRIGADE_ASSIGN_OR_RETURN(exported, exported_family->WithLabels({}));
    BRIGADE_ASSIGN_OR_RETURN(dropped, dropped_family->WithLabels({}));
    BRIGADE_ASSIGN_OR_RETURN(failures, failures_family->WithLabels({}));
  }
  auto processor =
      std::make_unique<SpanProcessor>(options, std::move(exporter), exported, dropped, failures);
  return processor;
}

SpanProcessor::SpanProcessor(Options options, std::unique_ptr<SpanExporter> exporter,
                             Counter* exported, Counter* dropped, Counter* failures)
    : exporter_(std::move(exporter)),
      exported_counter_(exported),
      dropped_counter_(dropped),
      failures_counter_(failures),
      worker_(std::make_unique<AsyncBatchWorker<SpanData>>(
          AsyncBatchWorker<SpanData>::Options{.capacity = options.max_queued_spans,
                                              .max_batch = options.max_export_batch_spans,
                                              .max_delay = options.schedule_delay},
          [this](std::vector<SpanData> batch) { ExportBatch(std::move(batch)); })) {}

bool SpanProcessor::Submit(std::vector<SpanData> spans) {
  const size_t n = spans.size();
  if (worker_->TryPushAll(std::move(spans))) return true;
  if (dropped_counter_ != nullptr) dropped_counter_->Add(n);
  return false;
}

bool SpanProcessor::Flush(absl::Duration timeout) { return worker_->Flush(timeout); }

void SpanProcessor::ExportBatch(std::vector<SpanData> batch) {
  if (exporter_->Export(batch).ok()) {
    exported_.fetch_add(batch.size(), std::memory_order_relaxed);
    if (exported_counter_ != nullptr) exported_counter_->Add(batch.size());
  } else {
    failed_.fetch_add(1, std::memory_order_relaxed);
    if (failures_counter_ != nullptr) failures_counter_->Add();
  }
}

}  // namespace brigade::telemetry
