#ifndef BRIGADE_TELEMETRY_OTLP_EXPORTER_H_
#define BRIGADE_TELEMETRY_OTLP_EXPORTER_H_

// OtlpHttpExporter: sends span batches to an OpenTelemetry collector as OTLP/HTTP JSON
// (POST <endpoint>, Content-Type: application/json; body from otlp_json.h), over one keep-alive
// connection (net/http_connection.h, the client every Brigade HTTP user shares).
//
// The blocking client runs on the span processor's worker thread, which exists to absorb export
// latency: an asynchronous interface would add an event loop for a caller that waits for each
// answer anyway. Its socket timeouts bound every connect, send and receive by `timeout`. The
// connection (and the collector's name lookup) is made on the first export, so a collector that
// is not resolvable yet at startup is retried like an unreachable one.
//
// Delivery (OTLP/HTTP rules): 2xx is success; 429, 502, 503 and 504 are
// retried up to `max_attempts` in all, after the server's Retry-After (seconds) or an
// exponential backoff from `initial_backoff` capped at `max_backoff`; connection failures
// are retried the same way; any other status (400 ...) fails the batch at once.
// Backoff sleeps happen on the span processor's thread, never on a request thread.
//
// Configuration can come from the standard OpenTelemetry variables (OtlpOptionsFromEnvironment).
//
// Thread safety: Export is called by SpanProcessor's thread only.
// Failure: Create answers INVALID_ARGUMENT for an unusable endpoint or limits; Export answers
// the last error (UNAVAILABLE, DEADLINE_EXCEEDED, or INVALID_ARGUMENT/INTERNAL for a rejecting
// status, with the collector's answer).

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "net/http_connection.h"
#include "net/http_url.h"
#include "net/receive_buffer.h"
#include "telemetry/otlp_json.h"
#include "telemetry/span_exporter.h"

namespace brigade::telemetry {

class OtlpHttpExporter final : public SpanExporter {
 public:
  struct Options {
    // The full traces URL (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT).
    std::string endpoint = "http://localhost:4318/v1/traces";
    OtlpResource resource{};
    absl::Duration timeout = absl::Seconds(10);
    int max_attempts = 3;
    absl::Duration initial_backoff = absl::Milliseconds(200);
    absl::Duration max_backoff = absl::Seconds(5);
  };

  static absl::StatusOr<std::unique_ptr<OtlpHttpExporter>> Create(Options options);

  absl::Status Export(std::span<const SpanData> spans) override;

  // Use Create().
  OtlpHttpExporter(Options options, net::HttpUrl url)
      : options_(std::move(options)), url_(std::move(url)) {}

 private:
  // One POST of `body`: UNAVAILABLE or DEADLINE_EXCEEDED naming the endpoint when no answer came.
  absl::StatusOr<net::HttpResponse> Post(std::string_view body);

  const Options options_;
  const net::HttpUrl url_;
  std::unique_ptr<net::HttpConnection> connection_;
  net::ReceiveBuffer receive_;  // reused across exports
};

// Options from OpenTelemetry's environment variables, starting from `defaults`:
//   OTEL_EXPORTER_OTLP_TRACES_ENDPOINT  the traces URL as is
//   OTEL_EXPORTER_OTLP_ENDPOINT         base URL; "/v1/traces" is appended
//   OTEL_EXPORTER_OTLP_TIMEOUT / OTEL_EXPORTER_OTLP_TRACES_TIMEOUT   milliseconds
//   OTEL_SERVICE_NAME                   resource service.name
//   OTEL_RESOURCE_ATTRIBUTES            key=value,key=value resource attributes
// `getenv` returns a variable's value or null (tests pass their own).
OtlpHttpExporter::Options OtlpOptionsFromEnvironment(
    OtlpHttpExporter::Options defaults, absl::FunctionRef<const char*(const char*)> getenv);

}  // namespace brigade::telemetry

#endif  // BRIGADE_TELEMETRY_OTLP_EXPORTER_H_
