#ifndef BRIGADE_TOOLS_CLIENT_FAKE_HTTP_SERVER_H_
#define BRIGADE_TOOLS_CLIENT_FAKE_HTTP_SERVER_H_

// FakeHttpServer: a scripted HTTP/1.1 server on 127.0.0.1 for the client's tests and its cost
// benchmark. Test-only.
//
// Each connection gets a thread that reads requests (head, then a Content-Length body) and answers
// each with the bytes the handler returns, written verbatim: so a test can send malformed,
// chunked, closing or silent answers and see what the client does. A Reply may also close the
// connection after writing, or close it without writing anything.
//
// Thread safety: the handler is called from the connection threads, possibly concurrently;
// counters may be read from any thread. Destruction stops accepting, shuts every connection down
// and joins the threads (a handler blocked in `hold` is released first).

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace brigade::client {

class FakeHttpServer {
 public:
  struct Request {
    std::string head;  // request line and headers, up to and including the blank line
    std::string body;
    int connection = 0;  // 0-based, in accept order
    int index_on_connection = 0;
  };
  struct Reply {
    std::string bytes;
    // Close the connection after writing `bytes` (empty `bytes` closes without answering).
    bool close = false;
    // Write nothing and keep the connection open until the server is destroyed.
    bool hold = false;
  };
  using Handler = std::function<Reply(const Request&)>;

  static absl::StatusOr<std::unique_ptr<FakeHttpServer>> Start(Handler handler);
  ~FakeHttpServer();
  FakeHttpServer(const FakeHttpServer&) = delete;
  FakeHttpServer& operator=(const FakeHttpServer&) = delete;

  int port() const { return port_; }
  int connections_accepted() const { return connections_.load(); }

  // "HTTP/1.1 <status> X\r\nContent-Length: N\r\n<extra_headers>\r\n<body>".
  static std::string Response(int status, std::string_view body,
                              std::string_view extra_headers = "");

  // Use Start().
  FakeHttpServer(int listen_fd, int port, Handler handler);

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

}  // namespace brigade::client

#endif  // BRIGADE_TOOLS_CLIENT_FAKE_HTTP_SERVER_H_
