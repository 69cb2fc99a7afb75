#ifndef BRIGADE_NET_TEST_CLIENT_H_
#define BRIGADE_NET_TEST_CLIENT_H_

// TestClient (test support): HttpConnection's raw mode dressed for assertions, for the server's
// transport and handler tests. The test writes exact bytes (malformed requests, pipelined
// requests, a request in pieces) and reads each answer as status, headers and body. Only the
// status line and headers are interpreted, by the client's own parser, so the server is checked
// against bytes on the wire rather than against the library it is built on.
//
// Thread safety: none; one thread per client. Failure: Send ignores errors (what the server
// already sent stays readable); Read answers nullopt on EOF, timeout or a malformed response.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "net/http_connection.h"
#include "net/receive_buffer.h"

namespace brigade::net::testing {

// How long the client waits for the server before giving up.
inline constexpr int kWaitMs = 5000;

struct ClientResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  // The header's value, or "" when absent (`name` in lower case).
  std::string header(const std::string& name) const;
};

class TestClient {
 public:
  // Connects to 127.0.0.1:`port`.
  explicit TestClient(int port);
  TestClient(const TestClient&) = delete;
  TestClient& operator=(const TestClient&) = delete;

  bool connected() const { return connected_; }
  void Send(std::string_view bytes);
  // Reads one response (an interim 100 included); nullopt on EOF or timeout.
  std::optional<ClientResponse> Read(int timeout_ms = kWaitMs);
  // True when the server closes the connection (EOF or reset) within the timeout.
  bool WaitForClose(int timeout_ms = kWaitMs);
  void Close();

 private:
  std::unique_ptr<HttpConnection> connection_;
  ReceiveBuffer buffer_;
  bool connected_ = false;
};

// Request builders.
std::string GetRequest(std::string_view target, std::string_view extra_headers = "");
std::string PostRequest(std::string_view target, std::string_view body,
                        std::string_view extra_headers = "");

}  // namespace brigade::net::testing

#endif  // BRIGADE_NET_TEST_CLIENT_H_
