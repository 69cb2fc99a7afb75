#include "telemetry/otlp_exporter.h"

#include <sys/uio.h>

#include <algorithm>

#include "absl/time/clock.h"
#include "core/strings.h"

namespace brigade::telemetry {
namespace {

// A collector's answer is a small JSON status; anything longer is not worth reading.
constexpr size_t kMaxResponseBytes = (size_t{1} << 20) + (size_t{64} << 10);

bool IsRetryableStatus(int status) {
  return status == 429 || status == 502 || status == 503 || status == 504;
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return text;
}

}  // namespace

absl::StatusOr<std::unique_ptr<OtlpHttpExporter>> OtlpHttpExporter::Create(Options options) {
  absl::StatusOr<net::HttpUrl> url = net::ParseHttpUrl(options.endpoint);
  if (!url.ok()) {
    return absl::InvalidArgumentError(
        StrCat("OTLP exporter endpoint: ", ToStd(url.status().message())));
  }
  // The connection takes whole milliseconds.
  if (options.timeout < absl::Milliseconds(1) || options.max_attempts <= 0 ||
      options.initial_backoff < absl::ZeroDuration() ||
      options.max_backoff < options.initial_backoff) {
    return absl::InvalidArgumentError(
        "OTLP exporter: timeout must be at least 1 ms, max_attempts positive, and "
        "0 <= initial_backoff <= max_backoff");
  }
  return std::make_unique<OtlpHttpExporter>(std::move(options), *std::move(url));
}

absl::StatusOr<net::HttpResponse> OtlpHttpExporter::Post(std::string_view body) {
  if (connection_ == nullptr) {
    absl::StatusOr<std::unique_ptr<net::HttpConnection>> connection =
        net::HttpConnection::Create({.host = url_.host,
                                     .port = url_.port,
                                     .timeout_ms = absl::ToInt64Milliseconds(options_.timeout),
                                     .max_response_bytes = kMaxResponseBytes});
    if (!connection.ok()) {
      return absl::UnavailableError(
          StrCat("POST ", options_.endpoint, ": ", ToStd(connection.status().message())));
    }
    connection_ = *std::move(connection);
  }
  std::string head = StrCat(
      "POST ", url_.target, " HTTP/1.1\r\nHost: ", connection_->authority(),
      "\r\nUser-Agent: brigade\r\nContent-Type: application/json\r\nContent-Length: ", body.size(),
      "\r\n\r\n");
  const iovec parts[] = {{head.data(), head.size()}, {const_cast<char*>(body.data()), body.size()}};
  absl::StatusOr<net::HttpResponse> response = connection_->RoundTrip(parts, &receive_);
  if (response.ok()) return response;
  const std::string message =
      StrCat("POST ", options_.endpoint, ": ", ToStd(response.status().message()));
  if (response.status().code() == absl::StatusCode::kDeadlineExceeded) {
    return absl::DeadlineExceededError(message);
  }
  return absl::UnavailableError(message);
}

absl::Status OtlpHttpExporter::Export(std::span<const SpanData> spans) {
  if (spans.empty()) return absl::OkStatus();
  const std::string body = EncodeOtlpTraceRequest(spans, options_.resource);
  absl::Duration backoff = options_.initial_backoff;
  absl::Status last_error;
  for (int attempt = 1; attempt <= options_.max_attempts; ++attempt) {
    std::optional<absl::Duration> wait;
    absl::StatusOr<net::HttpResponse> response = Post(body);
    if (response.ok()) {
      const int status = response->head.status;
      if (status >= 200 && status < 300) return absl::OkStatus();
      const std::string_view answer(receive_.data() + response->body_offset,
                                    std::min<size_t>(response->body_bytes, 200));
      const std::string message =
          StrCat("OTLP collector ", options_.endpoint, " answered ", status, ": ", answer);
      if (!IsRetryableStatus(status)) {
        return status >= 400 && status < 500 ? absl::InvalidArgumentError(message)
                                             : absl::InternalError(message);
      }
      last_error = absl::UnavailableError(message);
      // Retry-After as delay-seconds (the HTTP-date form is ignored: collectors send seconds).
      if (response->head.retry_after_seconds.has_value()) {
        wait = absl::Seconds(*response->head.retry_after_seconds);
      }
    } else {
      last_error = response.status();
    }
    if (attempt == options_.max_attempts) break;
    absl::SleepFor(std::min(wait.value_or(backoff), options_.max_backoff));
    backoff = std::min(backoff * 2, options_.max_backoff);
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
      options.timeout = absl::Milliseconds(timeout_ms);  // the variables are in milliseconds
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
