#include "tools/client/fake_http_server.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "core/strings.h"

namespace brigade::client {
namespace {

// Content-Length of a request head (0 when absent); names compared case-insensitively.
size_t ContentLength(std::string_view head) {
  constexpr std::string_view kName = "\r\ncontent-length:";
  for (size_t i = 0; i + kName.size() <= head.size(); ++i) {
    bool match = true;
    for (size_t k = 0; k < kName.size() && match; ++k) {
      char c = head[i + k];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      match = c == kName[k];
    }
    if (!match) continue;
    size_t pos = i + kName.size();
    while (pos < head.size() && head[pos] == ' ') ++pos;
    size_t length = 0;
    while (pos < head.size() && head[pos] >= '0' && head[pos] <= '9') {
      length = length * 10 + static_cast<size_t>(head[pos] - '0');
      ++pos;
    }
    return length;
  }
  return 0;
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

absl::StatusOr<std::unique_ptr<FakeHttpServer>> FakeHttpServer::Start(Handler handler) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError(StrCat("socket: ", std::strerror(errno)));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof(address);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      ::listen(fd, 64) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    const int error = errno;
    ::close(fd);
    return absl::InternalError(StrCat("bind/listen: ", std::strerror(error)));
  }
  return std::make_unique<FakeHttpServer>(fd, ntohs(address.sin_port), std::move(handler));
}

FakeHttpServer::FakeHttpServer(int listen_fd, int port, Handler handler)
    : listen_fd_(listen_fd), port_(port), handler_(std::move(handler)) {
  accept_thread_ = std::thread([this] { AcceptLoop(); });
}

FakeHttpServer::~FakeHttpServer() {
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

std::string FakeHttpServer::Response(int status, std::string_view body,
                                     std::string_view extra_headers) {
  return StrCat("HTTP/1.1 ", status, " X\r\nContent-Length: ", body.size(), "\r\n", extra_headers,
                "\r\n", body);
}

void FakeHttpServer::AcceptLoop() {
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

void FakeHttpServer::Serve(int fd, int connection) {
  std::string received;
  char chunk[64 * 1024];
  int index = 0;
  bool open = true;
  while (open) {
    size_t head_end;
    while ((head_end = received.find("\r\n\r\n")) == std::string::npos) {
      const ssize_t n = ::recv(fd, chunk, sizeof(chunk), 0);
      if (n <= 0) {
        open = false;
        break;
      }
      received.append(chunk, static_cast<size_t>(n));
    }
    if (!open) break;
    Request request;
    request.head = received.substr(0, head_end + 4);
    const size_t body_bytes = ContentLength(request.head);
    while (received.size() < head_end + 4 + body_bytes) {
      const ssize_t n = ::recv(fd, chunk, sizeof(chunk), 0);
      if (n <= 0) {
        open = false;
        break;
      }
      received.append(chunk, static_cast<size_t>(n));
    }
    if (!open) break;
    request.body = received.substr(head_end + 4, body_bytes);
    received.erase(0, head_end + 4 + body_bytes);
    request.connection = connection;
    request.index_on_connection = index++;

    const Reply reply = handler_(request);
    if (reply.hold) {
      // Wait for the destructor's shutdown (recv then returns 0).
      while (::recv(fd, chunk, sizeof(chunk), 0) > 0) {
      }
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

}  // namespace brigade::client
