#ifndef BRIGADE_FRONTEND_HTTP_HTTP_TEST_CLIENT_H_
#define BRIGADE_FRONTEND_HTTP_HTTP_TEST_CLIENT_H_

// TestClient: a blocking HTTP/1.1 client on a raw POSIX socket, for the transport and handler
// tests. Deliberately independent of Beast and Asio, so the server is checked against bytes on the
// wire rather than against its own library. Test-only; one thread per client.

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace brigade::frontend::testing {

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
  ~TestClient();
  TestClient(const TestClient&) = delete;
  TestClient& operator=(const TestClient&) = delete;

  bool connected() const { return connected_; }
  void Send(std::string_view bytes);
  // Reads one response (head + Content-Length body); nullopt on EOF or timeout.
  std::optional<ClientResponse> Read(int timeout_ms = kWaitMs);
  // True when the server closes the connection (EOF or reset) within the timeout.
  bool WaitForClose(int timeout_ms = kWaitMs);
  void Close();

 private:
  bool Fill(int timeout_ms);

  int fd_ = -1;
  bool connected_ = false;
  std::string buffer_;
};

// Request builders.
std::string GetRequest(std::string_view target, std::string_view extra_headers = "");
std::string PostRequest(std::string_view target, std::string_view body,
                        std::string_view extra_headers = "");

}  // namespace brigade::frontend::testing

#endif  // BRIGADE_FRONTEND_HTTP_HTTP_TEST_CLIENT_H_
