#include "telemetry/trace_file_exporter.h"

#include <cerrno>
#include <cstring>

#include "core/strings.h"

namespace brigade::telemetry {

absl::StatusOr<std::unique_ptr<TraceFileExporter>> TraceFileExporter::Create(
    std::string path, OtlpResource resource) {
  if (path.empty()) return absl::InvalidArgumentError("trace file: empty path");
  std::FILE* file = std::fopen(path.c_str(), "a");
  if (file == nullptr) {
    return absl::UnavailableError(
        StrCat("trace file ", path, ": cannot open for append: ", std::strerror(errno)));
  }
  return std::make_unique<TraceFileExporter>(std::move(path), std::move(resource), file);
}

TraceFileExporter::~TraceFileExporter() { std::fclose(file_); }

absl::Status TraceFileExporter::Export(std::span<const SpanData> spans) {
  if (spans.empty()) return absl::OkStatus();
  std::string line = EncodeOtlpTraceRequest(spans, resource_);
  line.push_back('\n');
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0) {
    return absl::UnavailableError(
        StrCat("trace file ", path_, ": write failed: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace brigade::telemetry
