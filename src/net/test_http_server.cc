#include "net/test_http_server.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <exception>

#include "core/http_tokens.h"
#include "core/strings.h"

namespace brigade::net {
namespace {

// Larger request bodies close the connection unanswered.
constexpr size_t kMaxBodyBytes = size_t{64} << 20;

// Fills the request line and headers of `request` from its head; false when they are malformed.
bool ParseHead(TestHttpServer::Request* request) {
  std::string_view text(request->head);
  text.remove_suffix(2);  // the blank line's CRLF; every line now ends with one
  const size_t line_end = text.find("\r\n");
  const std::string_view line = text.substr(0, line_end);
  const size_t space = line.find(' ');
  const size_t last_space = line.rfind(' ');
  if (space == std::string_view::npos || last_space == space) return false;
  request->method = std::string(line.substr(0, space));
  request->target = std::string(line.substr(space + 1, last_space - space - 1));
  text.remove_prefix(line_end + 2);
  while (!text.empty()) {
    const size_t eol = text.find("\r\n");
    const std::string_view header = text.substr(0, eol);
    text.remove_prefix(eol + 2);
    const size_t colon = header.find(':');
    if (colon == std::string_view::npos) return false;
    request->headers.emplace_back(std::string(header.substr(0, colon)),
                                  std::string(TrimHttpWhitespace(header.substr(colon + 1))));
  }
  return true;
}

// The reason phrase is free text that no client acts on (RFC 9112 §4).
std::string_view ReasonPhrase(int status) { return status < 400 ? "OK" : "Error"; }

// Appends what the peer sends next to `received`; false on EOF or an error.
bool ReceiveMore(int fd, std::string* received) {
  char chunk[64 * 1024];
  ssize_t n;
  do {
    n = ::recv(fd, chunk, sizeof(chunk), 0);
  } while (n < 0 && errno == EINTR);
  if (n <= 0) return false;
  received->append(chunk, static_cast<size_t>(n));
  return true;
}

bool WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

std::optional<std::string> TestHttpServer::Request::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (EqualsIgnoreCase(key, name)) return value;
  }
  return std::nullopt;
}

bool TestHttpServer::Request::keep_alive() const {
  const std::optional<std::string> connection = Header("connection");
  if (head.find(" HTTP/1.0\r\n") != std::string::npos) {
    return connection.has_value() && EqualsIgnoreCase(*connection, "keep-alive");
  }
  return !connection.has_value() || !EqualsIgnoreCase(*connection, "close");
}

absl::StatusOr<std::unique_ptr<TestHttpServer>> TestHttpServer::Start(Handler handler,
                                                                      uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::UnavailableError(StrCat("socket: ", std::strerror(errno)));
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  socklen_t length = sizeof(address);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      ::listen(fd, 64) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    const int error = errno;
    ::close(fd);
    return absl::UnavailableError(
        StrCat("test server: cannot listen on 127.0.0.1:", port, ": ", std::strerror(error)));
  }
  return std::make_unique<TestHttpServer>(fd, ntohs(address.sin_port), std::move(handler));
}

TestHttpServer::TestHttpServer(int listen_fd, int port, Handler handler)
    : listen_fd_(listen_fd), port_(port), handler_(std::move(handler)) {
  accept_thread_ = std::thread([this] { AcceptLoop(); });
}

TestHttpServer::~TestHttpServer() {
  stopping_.store(true);
  ::shutdown(listen_fd_, SHUT_RDWR);
  accept_thread_.join();
  ::close(listen_fd_);
  std::vector<std::thread> threads;
  {
    absl::MutexLock lock(&mu_);
    for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
    threads.swap(threads_);
  }
  for (std::thread& thread : threads) thread.join();
}

std::string TestHttpServer::Response(int status, std::string_view body,
                                     std::string_view extra_headers) {
  return StrCat("HTTP/1.1 ", status, " X\r\nContent-Length: ", body.size(), "\r\n", extra_headers,
                "\r\n", body);
}

TestHttpServer::Reply TestHttpServer::Answer(
    const Request& request, int status, std::string_view content_type, std::string_view body,
    const std::vector<std::pair<std::string, std::string>>& headers) {
  Reply reply;
  reply.close = !request.keep_alive();
  reply.bytes = StrCat("HTTP/1.1 ", status, " ", ReasonPhrase(status),
                       "\r\nContent-Type: ", content_type, "\r\n");
  for (const auto& [name, value] : headers) reply.bytes += StrCat(name, ": ", value, "\r\n");
  if (reply.close) {
    reply.bytes += "Connection: close\r\n";
  } else if (request.head.find(" HTTP/1.0\r\n") != std::string::npos) {
    reply.bytes += "Connection: keep-alive\r\n";
  }
  reply.bytes += StrCat("Content-Length: ", body.size(), "\r\n\r\n", body);
  return reply;
}

void TestHttpServer::AcceptLoop() {
  while (!stopping_.load()) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR) continue;
      return;
    }
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    const int connection = connections_.fetch_add(1);
    absl::MutexLock lock(&mu_);
    if (stopping_.load()) {
      ::close(fd);
      return;
    }
    open_fds_.push_back(fd);
    threads_.emplace_back([this, fd, connection] { Serve(fd, connection); });
  }
}

void TestHttpServer::Serve(int fd, int connection) {
  std::string received;
  int index = 0;
  bool open = true;
  while (open) {
    size_t head_end;
    while (open && (head_end = received.find("\r\n\r\n")) == std::string::npos) {
      open = ReceiveMore(fd, &received);
    }
    if (!open) break;
    Request request;
    request.head = received.substr(0, head_end + 4);
    size_t body_bytes = 0;
    if (!ParseHead(&request)) break;
    if (const std::optional<std::string> length = request.Header("content-length");
        length.has_value() && (!ParseInteger(*length, &body_bytes) || body_bytes > kMaxBodyBytes)) {
      break;
    }
    while (open && received.size() < head_end + 4 + body_bytes) {
      open = ReceiveMore(fd, &received);
    }
    if (!open) break;
    request.body = received.substr(head_end + 4, body_bytes);
    received.erase(0, head_end + 4 + body_bytes);
    request.connection = connection;
    request.index_on_connection = index++;

    Reply reply;
    try {
      reply = handler_(request);
    } catch (const std::exception& e) {
      reply = Answer(request, 500, "text/plain; charset=utf-8", e.what());
    }
    if (reply.hold) {
      // Wait for the destructor's shutdown (recv then returns 0).
      std::string ignored;
      while (ReceiveMore(fd, &ignored)) ignored.clear();
      break;
    }
    if (!reply.bytes.empty() && !WriteAll(fd, reply.bytes)) break;
    if (reply.close) break;
  }
  {
    absl::MutexLock lock(&mu_);
    std::erase(open_fds_, fd);
  }
  ::close(fd);
}

}  // namespace brigade::net
