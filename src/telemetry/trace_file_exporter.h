#ifndef BRIGADE_TELEMETRY_TRACE_FILE_EXPORTER_H_
#define BRIGADE_TELEMETRY_TRACE_FILE_EXPORTER_H_

// TraceFileExporter: the local trace mode. Appends each exported batch to a file as one line of
// OTLP/JSON (an ExportTraceServiceRequest per line: the OpenTelemetry Collector file exporter's
// format, so the collector's otlpjsonfile receiver or `jq` can read it back).
//
// Thread safety: Export is called by SpanProcessor's thread only. Failure: Create answers
// INVALID_ARGUMENT for an empty path and UNAVAILABLE when the file cannot be opened for append;
// Export answers UNAVAILABLE when a write fails (e.g. disk full).

#include <cstdio>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "telemetry/otlp_json.h"
#include "telemetry/span_exporter.h"

namespace brigade::telemetry {

class TraceFileExporter final : public SpanExporter {
 public:
  static absl::StatusOr<std::unique_ptr<TraceFileExporter>> Create(std::string path,
                                                                   OtlpResource resource);
  ~TraceFileExporter() override;

  absl::Status Export(std::span<const SpanData> spans) override;

  // Use Create().
  TraceFileExporter(std::string path, OtlpResource resource, std::FILE* file)
      : path_(std::move(path)), resource_(std::move(resource)), file_(file) {}

 private:
  const std::string path_;
  const OtlpResource resource_;
  std::FILE* file_;  // owned
};

}  // namespace brigade::telemetry

#endif  // BRIGADE_TELEMETRY_TRACE_FILE_EXPORTER_H_
