#ifndef BRIGADE_NET_TEST_HTTP_SERVER_H_
#define BRIGADE_NET_TEST_HTTP_SERVER_H_

// TestHttpServer (test support): a scripted HTTP/1.1 server on 127.0.0.1 for tests that need a
// real peer on a socket: the KServe client's tests and cost benchmark, the load generator's
// tests, the fake OTLP collector and the dashboard fixture.
//
// Each connection gets a thread that reads requests (head, then a Content-Length body of at most
// 64 MiB) and answers each with the bytes the handler returns, written verbatim: so a test can
// send malformed, chunked, closing or silent answers and see what the client does. A Reply may
// also close the connection after writing, or close it without writing anything. Answer() builds
// a well-formed reply that honours the request's keep-alive, for handlers that just serve. A
// handler that throws answers 500 with the exception's message.
//
// Thread safety: the handler is called from the connection threads, possibly concurrently (a
// handler with shared state locks it); counters may be read from any thread. Destruction stops
// accepting, shuts every connection down and joins the threads (a handler blocked in `hold` is
// released first). Failure: Start answers UNAVAILABLE when the port cannot be bound.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace brigade::net {

class TestHttpServer {
 public:
  struct Request {
    std::string head;  // request line and headers, up to and including the blank line
    std::string method;
    std::string target;
    std::vector<std::pair<std::string, std::string>> headers;  // as sent, values trimmed
    std::string body;
    int connection = 0;  // 0-based, in accept order
    int index_on_connection = 0;
    // The first header called `name` (case-insensitive), or nullopt.
    std::optional<std::string> Header(std::string_view name) const;
    // HTTP/1.1 without `Connection: close`, or HTTP/1.0 with `Connection: keep-alive`.
    bool keep_alive() const;
  };
  struct Reply {
    std::string bytes;
    // Close the connection after writing `bytes` (empty `bytes` closes without answering).
    bool close = false;
    // Write nothing and keep the connection open until the server is destroyed.
    bool hold = false;
  };
  using Handler = std::function<Reply(const Request&)>;

  // Listens on 127.0.0.1:`port` (0 = any free port).
  static absl::StatusOr<std::unique_ptr<TestHttpServer>> Start(Handler handler, uint16_t port = 0);
  ~TestHttpServer();
  TestHttpServer(const TestHttpServer&) = delete;
  TestHttpServer& operator=(const TestHttpServer&) = delete;

  int port() const { return port_; }
  int connections_accepted() const { return connections_.load(); }

  // "HTTP/1.1 <status> X\r\nContent-Length: N\r\n<extra_headers>\r\n<body>".
  static std::string Response(int status, std::string_view body,
                              std::string_view extra_headers = "");

  // A complete answer to `request`: status line with its reason, Content-Type, `headers`,
  // Content-Length and the body; `Connection: close` (and closing) unless the request keeps the
  // connection alive, `Connection: keep-alive` for an HTTP/1.0 request that asked for it.
  static Reply Answer(const Request& request, int status, std::string_view content_type,
                      std::string_view body,
                      const std::vector<std::pair<std::string, std::string>>& headers = {});

  // Use Start().
  TestHttpServer(int listen_fd, int port, Handler handler);

 private:
  void AcceptLoop();
  void Serve(int fd, int connection);

  const int listen_fd_;
  const int port_;
  const Handler handler_;
  std::atomic<int> connections_{0};
  std::atomic<bool> stopping_{false};
  std::thread accept_thread_;
  absl::Mutex mu_;
  std::vector<int> open_fds_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> threads_ ABSL_GUARDED_BY(mu_);
};

}  // namespace brigade::net

#endif  // BRIGADE_NET_TEST_HTTP_SERVER_H_
