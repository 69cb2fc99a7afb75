#ifndef BRIGADE_TELEMETRY_LOOPBACK_HTTP_SERVER_H_
#define BRIGADE_TELEMETRY_LOOPBACK_HTTP_SERVER_H_

// LoopbackHttpServer (test support): a tiny HTTP/1.1 server on 127.0.0.1 that answers every
// request through a handler, for tests that need a real peer on a socket (a fake OTLP collector
// receiving real exports) and for the dashboard test fixture. One thread runs all connections;
// keep-alive is honoured; bodies up to 64 MiB.
//
// Thread safety: the handler runs on the server's thread, one request at a time; port() is safe
// from any thread. The destructor stops the thread and closes every connection.
// Failure: Start answers UNAVAILABLE when the port cannot be bound.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace brigade::telemetry {

class LoopbackHttpServer {
 public:
  struct Request {
    std::string method{};
    std::string target{};
    std::vector<std::pair<std::string, std::string>> headers{};
    std::string body{};
    // The first header called `name` (case-insensitive), or nullopt.
    std::optional<std::string> Header(std::string_view name) const;
  };
  struct Response {
    int status = 200;
    std::string content_type = "text/plain; charset=utf-8";
    std::string body{};
    std::vector<std::pair<std::string, std::string>> headers{};
  };
  using Handler = std::function<Response(const Request&)>;

  // Listens on 127.0.0.1:`port` (0 = any free port).
  static absl::StatusOr<std::unique_ptr<LoopbackHttpServer>> Start(Handler handler,
                                                                   uint16_t port = 0);
  ~LoopbackHttpServer();
  LoopbackHttpServer(const LoopbackHttpServer&) = delete;
  LoopbackHttpServer& operator=(const LoopbackHttpServer&) = delete;

  uint16_t port() const;

  class Impl;
  explicit LoopbackHttpServer(std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace brigade::telemetry

#endif  // BRIGADE_TELEMETRY_LOOPBACK_HTTP_SERVER_H_
