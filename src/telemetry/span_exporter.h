#ifndef BRIGADE_TELEMETRY_SPAN_EXPORTER_H_
#define BRIGADE_TELEMETRY_SPAN_EXPORTER_H_

// SpanExporter: where finished spans go (an OTLP collector, a JSON-lines file). Called by
// SpanProcessor from its background thread only, one batch at a time, so an implementation may
// block on I/O and needs no locking of its own.
// Failure: a non-OK status means the batch was not delivered; the processor counts and drops it
// (retrying, when the destination says to, is the exporter's own business).

#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "telemetry/span_data.h"

namespace brigade::telemetry {

class SpanExporter {
 public:
  virtual ~SpanExporter() = default;
  virtual absl::Status Export(std::span<const SpanData> spans) = 0;
};

// Hands every batch to each of several exporters (an OTLP collector and a local file at once).
// Fails with the first failure, after every exporter has had the batch.
class TeeSpanExporter final : public SpanExporter {
 public:
  explicit TeeSpanExporter(std::vector<std::unique_ptr<SpanExporter>> exporters)
      : exporters_(std::move(exporters)) {}

  absl::Status Export(std::span<const SpanData> spans) override {
    absl::Status first_error;
    for (const auto& exporter : exporters_) first_error.Update(exporter->Export(spans));
    return first_error;
  }

 private:
  std::vector<std::unique_ptr<SpanExporter>> exporters_;
};

}  // namespace brigade::telemetry

#endif  // BRIGADE_TELEMETRY_SPAN_EXPORTER_H_
