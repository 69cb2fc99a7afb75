#include "frontend/http/http_test_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <chrono>

#include "core/strings.h"

namespace brigade::frontend::testing {

std::string ClientResponse::header(const std::string& name) const {
  auto it = headers.find(name);
  return it == headers.end() ? "" : it->second;
}

TestClient::TestClient(int port) {
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

TestClient::~TestClient() { Close(); }

void TestClient::Send(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) return;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

std::optional<ClientResponse> TestClient::Read(int timeout_ms) {
  size_t head_end;
  while ((head_end = buffer_.find("\r\n\r\n")) == std::string::npos) {
    if (!Fill(timeout_ms)) return std::nullopt;
  }
  ClientResponse response;
  const std::string head = buffer_.substr(0, head_end);
  buffer_.erase(0, head_end + 4);
  response.status = std::stoi(head.substr(9, 3));
  size_t line_start = head.find("\r\n");
  while (line_start != std::string::npos) {
    line_start += 2;
    const size_t line_end = head.find("\r\n", line_start);
    const std::string line = head.substr(line_start, line_end - line_start);
    const size_t colon = line.find(':');
    std::string name = line.substr(0, colon);
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    response.headers[name] = line.substr(colon + 2);
    line_start = line_end;
  }
  if (response.status == 100) return response;
  const size_t length = std::stoul(response.header("content-length"));
  while (buffer_.size() < length) {
    if (!Fill(timeout_ms)) return std::nullopt;
  }
  response.body = buffer_.substr(0, length);
  buffer_.erase(0, length);
  return response;
}

bool TestClient::WaitForClose(int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd poll_fd{fd_, POLLIN, 0};
    if (::poll(&poll_fd, 1, static_cast<int>(left.count())) <= 0) return false;
    char scratch[4096];
    const ssize_t n = ::recv(fd_, scratch, sizeof(scratch), 0);
    if (n <= 0) return true;
  }
}

void TestClient::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool TestClient::Fill(int timeout_ms) {
  pollfd poll_fd{fd_, POLLIN, 0};
  if (::poll(&poll_fd, 1, timeout_ms) <= 0) return false;
  char scratch[65536];
  const ssize_t n = ::recv(fd_, scratch, sizeof(scratch), 0);
  if (n <= 0) return false;
  buffer_.append(scratch, static_cast<size_t>(n));
  return true;
}

std::string GetRequest(std::string_view target, std::string_view extra_headers) {
  return StrCat("GET ", target, " HTTP/1.1\r\nHost: t\r\n", extra_headers, "\r\n");
}

std::string PostRequest(std::string_view target, std::string_view body,
                        std::string_view extra_headers) {
  return StrCat("POST ", target, " HTTP/1.1\r\nHost: t\r\nContent-Length: ", body.size(), "\r\n",
                extra_headers, "\r\n", body);
}

}  // namespace brigade::frontend::testing
