#ifndef BRIGADE_TELEMETRY_HTTP_POST_CLIENT_H_
#define BRIGADE_TELEMETRY_HTTP_POST_CLIENT_H_

// HttpPostClient: the smallest HTTP/1.1 client that exporting telemetry needs (Boost.Beast on
// Asio): POST a body to one fixed URL and read the answer, with a timeout on every step and one
// keep-alive connection reused across calls. Plain http:// only (no TLS in Debian-only builds
// without a second TLS stack; put a collector or sidecar on localhost).
//
// Thread safety: none; one thread at a time (the exporter's background thread).
// Failure: Post answers UNAVAILABLE for connection, write or read failures (naming the URL),
// DEADLINE_EXCEEDED when a step runs past `timeout_ms`; any HTTP status is a successful Post
// (the caller decides what 4xx/5xx mean). A reused connection the peer closed is retried once on
// a fresh one.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace brigade::telemetry {

struct HttpUrl {
  std::string host{};
  uint16_t port = 80;
  std::string target = "/";  // path and query
};

// Parses http://host[:port][/path...] (host may be [IPv6]). INVALID_ARGUMENT otherwise,
// including https:// (not supported).
absl::StatusOr<HttpUrl> ParseHttpUrl(std::string_view url);

class HttpPostClient {
 public:
  struct Response {
    int status = 0;
    std::string body{};
    std::optional<std::string> retry_after{};  // the Retry-After header, when sent
  };

  HttpPostClient(HttpUrl url, int64_t timeout_ms);
  ~HttpPostClient();
  HttpPostClient(const HttpPostClient&) = delete;
  HttpPostClient& operator=(const HttpPostClient&) = delete;

  absl::StatusOr<Response> Post(std::string_view content_type, std::string body);

  const HttpUrl& url() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace brigade::telemetry

#endif  // BRIGADE_TELEMETRY_HTTP_POST_CLIENT_H_
