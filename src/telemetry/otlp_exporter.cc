#include "telemetry/otlp_exporter.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "core/strings.h"

namespace brigade::telemetry {
namespace {

bool IsRetryableStatus(int status) {
  return status == 429 || status == 502 || status == 503 || status == 504;
}

// Retry-After as delay-seconds (the HTTP-date form is ignored: collectors send seconds).
std::optional<int64_t> RetryAfterMs(const std::optional<std::string>& header) {
  int64_t seconds = 0;
  if (!header.has_value() || !ParseInteger(*header, &seconds) || seconds < 0) return std::nullopt;
  return seconds * 1000;
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return text;
}

}  // namespace

absl::StatusOr<std::unique_ptr<OtlpHttpExporter>> OtlpHttpExporter::Create(Options options) {
  absl::StatusOr<HttpUrl> url = ParseHttpUrl(options.endpoint);
  if (!url.ok()) {
    return absl::InvalidArgumentError(
        StrCat("OTLP exporter endpoint: ", ToStd(url.status().message())));
  }
  if (options.timeout_ms <= 0 || options.max_attempts <= 0 || options.initial_backoff_ms < 0 ||
      options.max_backoff_ms < options.initial_backoff_ms) {
    return absl::InvalidArgumentError(
        "OTLP exporter: timeout_ms and max_attempts must be positive and "
        "0 <= initial_backoff_ms <= max_backoff_ms");
  }
  return std::make_unique<OtlpHttpExporter>(std::move(options), *std::move(url));
}

absl::Status OtlpHttpExporter::Export(std::span<const SpanData> spans) {
  if (spans.empty()) return absl::OkStatus();
  const std::string body = EncodeOtlpTraceRequest(spans, options_.resource);
  int64_t backoff_ms = options_.initial_backoff_ms;
  absl::Status last_error;
  for (int attempt = 1; attempt <= options_.max_attempts; ++attempt) {
    std::optional<int64_t> wait_ms;
    absl::StatusOr<HttpPostClient::Response> response = client_.Post("application/json", body);
    if (response.ok()) {
      if (response->status >= 200 && response->status < 300) return absl::OkStatus();
      const std::string message = StrCat("OTLP collector ", options_.endpoint, " answered ",
                                         response->status, ": ", response->body.substr(0, 200));
      if (!IsRetryableStatus(response->status)) {
        return response->status >= 400 && response->status < 500
                   ? absl::InvalidArgumentError(message)
                   : absl::InternalError(message);
      }
      last_error = absl::UnavailableError(message);
      wait_ms = RetryAfterMs(response->retry_after);
    } else {
      last_error = response.status();
    }
    if (attempt == options_.max_attempts) break;
    const int64_t sleep_ms = std::min(wait_ms.value_or(backoff_ms), options_.max_backoff_ms);
    std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
    backoff_ms = std::min(backoff_ms * 2, options_.max_backoff_ms);
  }
  return last_error;
}

OtlpHttpExporter::Options OtlpOptionsFromEnvironment(
    OtlpHttpExporter::Options defaults, absl::FunctionRef<const char*(const char*)> getenv) {
  OtlpHttpExporter::Options options = std::move(defaults);
  const auto get = [&](const char* name) -> std::optional<std::string_view> {
    const char* value = getenv(name);
    if (value == nullptr || *value == '\0') return std::nullopt;
    return std::string_view(value);
  };
  if (auto endpoint = get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")) {
    options.endpoint = std::string(*endpoint);
  } else if (auto base = get("OTEL_EXPORTER_OTLP_ENDPOINT")) {
    std::string_view trimmed = *base;
    while (trimmed.ends_with('/')) trimmed.remove_suffix(1);
    options.endpoint = StrCat(trimmed, "/v1/traces");
  }
  for (const char* name : {"OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"}) {
    int64_t timeout_ms = 0;
    if (auto value = get(name); value && ParseInteger(*value, &timeout_ms) && timeout_ms > 0) {
      options.timeout_ms = timeout_ms;
    }
  }
  const std::optional<std::string_view> service = get("OTEL_SERVICE_NAME");
  if (service) options.resource.service_name = *service;
  if (auto attributes = get("OTEL_RESOURCE_ATTRIBUTES")) {
    std::string_view rest = *attributes;
    while (!rest.empty()) {
      const size_t comma = rest.find(',');
      const std::string_view pair = rest.substr(0, comma);
      if (const size_t equals = pair.find('='); equals != std::string_view::npos) {
        const std::string_view key = Trim(pair.substr(0, equals));
        const std::string_view value = Trim(pair.substr(equals + 1));
        if (key == "service.name") {
          // OTEL_SERVICE_NAME wins over the attribute, as the specification says.
          if (!service) options.resource.service_name = value;
        } else if (!key.empty()) {
          options.resource.attributes.emplace_back(key, value);
        }
      }
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  return options;
}

}  // namespace brigade::telemetry
