#include "net/http_connection.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>

#include "core/status_macros.h"
#include "core/strings.h"
#include "openssl/err.h"
#include "openssl/ssl.h"
#include "openssl/x509v3.h"

namespace brigade::net {
namespace {

std::string Authority(const std::string& host, int port) {
  if (host.find(':') != std::string::npos) return StrCat("[", host, "]:", port);
  return StrCat(host, ":", port);
}

// A request smaller than this is gathered into one buffer for one TLS record.
constexpr size_t kGatherBytes = size_t{64} * 1024;

std::string TlsExchangeError() {
  return TakeOpenSslError("connection closed during the TLS exchange");
}

bool IsIpLiteral(const std::string& host) {
  in6_addr ignored;
  return inet_pton(AF_INET, host.c_str(), &ignored) == 1 ||
         inet_pton(AF_INET6, host.c_str(), &ignored) == 1;
}

timeval ToTimeval(int64_t timeout_ms) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout_ms / 1000);
  tv.tv_usec = static_cast<suseconds_t>((timeout_ms % 1000) * 1000);
  return tv;
}

}  // namespace

void HttpConnection::AddrInfoDeleter::operator()(addrinfo* info) const { freeaddrinfo(info); }

absl::StatusOr<std::unique_ptr<HttpConnection>> HttpConnection::Create(Options options) {
  if (options.port <= 0 || options.port > 65535) {
    return absl::InvalidArgumentError(StrCat("port ", options.port, " is out of range"));
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(options.port);
  const int error = getaddrinfo(options.host.c_str(), port.c_str(), &hints, &found);
  if (error != 0) {
    return absl::InvalidArgumentError(
        StrCat("cannot resolve '", options.host, "': ", gai_strerror(error)));
  }
  std::unique_ptr<addrinfo, AddrInfoDeleter> addresses(found);
  return std::make_unique<HttpConnection>(Key(), std::move(options), std::move(addresses));
}

HttpConnection::HttpConnection(Key, Options options,
                               std::unique_ptr<addrinfo, AddrInfoDeleter> addresses)
    : options_(std::move(options)),
      authority_(Authority(options_.host, options_.port)),
      addresses_(std::move(addresses)) {}

HttpConnection::~HttpConnection() { Close(); }

void HttpConnection::Close() {
  if (ssl_ != nullptr) {
    SSL_shutdown(ssl_);  // close_notify, without waiting for the server's
    SSL_free(ssl_);
    ssl_ = nullptr;
    ERR_clear_error();
  }
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

absl::Status HttpConnection::SocketError(std::string_view action, int error) {
  Close();
  if (error == EAGAIN || error == EWOULDBLOCK || error == ETIMEDOUT || error == EINPROGRESS) {
    return absl::DeadlineExceededError(
        StrCat(action, " ", authority_, ": no progress within ", options_.timeout_ms, " ms"));
  }
  if (error == EPROTO && !tls_error_.empty()) {
    return absl::UnavailableError(StrCat(action, " ", authority_, ": TLS: ", tls_error_));
  }
  return absl::UnavailableError(StrCat(action, " ", authority_, ": ", std::strerror(error)));
}

absl::Status HttpConnection::Connect() {
  Close();
  int last_error = ECONNREFUSED;
  for (const addrinfo* address = addresses_.get(); address != nullptr; address = address->ai_next) {
    const int fd =
        ::socket(address->ai_family, address->ai_socktype | SOCK_CLOEXEC, address->ai_protocol);
    if (fd < 0) {
      last_error = errno;
      continue;
    }
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (options_.timeout_ms > 0) {
      const timeval tv = ToTimeval(options_.timeout_ms);
      setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
      setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));  // also bounds connect()
    }
    int result;
    do {
      result = ::connect(fd, address->ai_addr, address->ai_addrlen);
    } while (result != 0 && errno == EINTR);
    if (result == 0) {
      fd_ = fd;
      return options_.tls != nullptr ? StartTls() : absl::OkStatus();
    }
    last_error = errno;
    ::close(fd);
  }
  return SocketError("cannot connect to", last_error);
}

absl::Status HttpConnection::StartTls() {
  ERR_clear_error();
  ssl_ = SSL_new(options_.tls->native());
  if (ssl_ == nullptr || SSL_set_fd(ssl_, fd_) != 1) {
    tls_error_ = TlsExchangeError();
    return SocketError("TLS with", EPROTO);
  }
  if (IsIpLiteral(options_.host)) {
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl_), options_.host.c_str());
  } else {
    SSL_set_tlsext_host_name(ssl_, options_.host.c_str());
    SSL_set1_host(ssl_, options_.host.c_str());
  }
  while (true) {
    const int result = SSL_connect(ssl_);
    if (result == 1) return absl::OkStatus();
    const int error = SSL_get_error(ssl_, result);
    if (error == SSL_ERROR_SYSCALL && errno == EINTR) continue;
    if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) {
      return SocketError("TLS handshake with", EAGAIN);
    }
    const long verify = SSL_get_verify_result(ssl_);
    tls_error_ = verify != X509_V_OK
                     ? StrCat("the server's certificate: ", X509_verify_cert_error_string(verify))
                     : TlsExchangeError();
    return SocketError("TLS handshake with", EPROTO);
  }
}

ssize_t HttpConnection::ReadSome(void* data, size_t size) {
  if (ssl_ == nullptr) return ::recv(fd_, data, size, 0);
  ERR_clear_error();
  errno = 0;
  const int n = SSL_read(ssl_, data, static_cast<int>(std::min<size_t>(size, INT32_MAX)));
  if (n > 0) return n;
  switch (SSL_get_error(ssl_, n)) {
    case SSL_ERROR_ZERO_RETURN:
      return 0;  // close_notify
    case SSL_ERROR_WANT_READ:
    case SSL_ERROR_WANT_WRITE:
      errno = EAGAIN;  // SO_RCVTIMEO ran out
      return -1;
    case SSL_ERROR_SYSCALL:
      if (errno == 0) return 0;  // closed without close_notify
      return -1;
    default:
      tls_error_ = TlsExchangeError();
      errno = EPROTO;
      return -1;
  }
}

absl::Status HttpConnection::SendAll(std::span<const iovec> parts, bool raw) {
  if (ssl_ != nullptr) {
    // One SSL_write per buffer: small requests are gathered first (one record, one send).
    size_t total = 0;
    for (const iovec& part : parts) total += part.iov_len;
    const iovec* first_part = parts.data();
    size_t count = parts.size();
    iovec gathered{};
    if (parts.size() > 1 && total <= kGatherBytes) {
      gathered_.clear();
      for (const iovec& part : parts) {
        gathered_.append(static_cast<const char*>(part.iov_base), part.iov_len);
      }
      gathered = {gathered_.data(), gathered_.size()};
      first_part = &gathered;
      count = 1;
    }
    for (size_t i = 0; i < count; ++i) {
      if (first_part[i].iov_len == 0) continue;
      ERR_clear_error();
      const int n = SSL_write(ssl_, first_part[i].iov_base,
                              static_cast<int>(std::min<size_t>(first_part[i].iov_len, INT32_MAX)));
      if (n > 0 && static_cast<size_t>(n) == first_part[i].iov_len) continue;
      const int error = SSL_get_error(ssl_, n);
      int code = EPROTO;
      if (error == SSL_ERROR_WANT_WRITE || error == SSL_ERROR_WANT_READ) {
        code = EAGAIN;
      } else if (error == SSL_ERROR_SYSCALL && errno != 0) {
        code = errno;
      } else {
        tls_error_ = TlsExchangeError();
      }
      if (raw) {
        return absl::UnavailableError(StrCat("sending to ", authority_, ": ",
                                             code == EPROTO ? tls_error_ : std::strerror(code)));
      }
      return SocketError("sending to", code);
    }
    return absl::OkStatus();
  }
  pending_.assign(parts.begin(), parts.end());
  size_t first = 0;
  while (first < pending_.size()) {
    msghdr message{};
    message.msg_iov = pending_.data() + first;
    message.msg_iovlen = pending_.size() - first;
    const ssize_t sent = ::sendmsg(fd_, &message, MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EINTR) continue;
      if (raw) {
        return absl::UnavailableError(
            StrCat("sending to ", authority_, ": ", std::strerror(errno)));
      }
      return SocketError("sending to", errno);
    }
    size_t remaining = static_cast<size_t>(sent);
    while (first < pending_.size() && remaining >= pending_[first].iov_len) {
      remaining -= pending_[first].iov_len;
      ++first;
    }
    if (remaining > 0) {
      pending_[first].iov_base = static_cast<char*>(pending_[first].iov_base) + remaining;
      pending_[first].iov_len -= remaining;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<HttpResponse> HttpConnection::Receive(ReceiveBuffer* buffer, bool raw,
                                                     bool* nothing_received) {
  buffer->Clear();
  *nothing_received = true;
  // Raw mode: bytes left from before are parsed first, before any receive.
  bool have_unparsed = false;
  if (raw && !carry_.empty()) {
    buffer->Reserve(carry_.size());
    std::memcpy(buffer->write_ptr(), carry_.data(), carry_.size());
    buffer->Commit(carry_.size());
    carry_.clear();
    have_unparsed = true;
  }
  // Raw mode keeps what follows the response for the next call; otherwise it is an error.
  const auto keep_surplus = [&](size_t end) -> absl::Status {
    if (buffer->size() == end) return absl::OkStatus();
    if (!raw) {
      Close();
      return absl::InternalError(
          StrCat("malformed HTTP response from ", authority_, ": bytes after the body"));
    }
    carry_.assign(buffer->data() + end, buffer->size() - end);
    return absl::OkStatus();
  };
  HttpResponse response;
  bool have_head = false;
  // Total bytes (head + body) the response occupies, once known.
  std::optional<size_t> total_bytes;
  while (true) {
    if (!have_unparsed) {
      if (buffer->available() == 0) buffer->Reserve(buffer->capacity());
      const ssize_t n = ReadSome(buffer->write_ptr(), buffer->available());
      if (n < 0) {
        if (errno == EINTR) continue;
        if (raw && (errno == EAGAIN || errno == EWOULDBLOCK)) {
          carry_.assign(buffer->data(), buffer->size());
          return absl::DeadlineExceededError(
              StrCat("receiving from ", authority_, ": no complete response in time"));
        }
        if (raw) peer_closed_ = true;
        return SocketError("receiving from", errno);
      }
      if (n == 0) {
        if (raw) peer_closed_ = true;
        // EOF: the end of a body delimited by the connection's close, or a lost connection.
        if (have_head && !total_bytes.has_value() && !response.head.chunked) {
          response.body_offset = response.head.head_bytes;
          response.body_bytes = buffer->size() - response.head.head_bytes;
          Close();
          return response;
        }
        Close();
        return absl::UnavailableError(
            StrCat("connection to ", authority_, " closed by the server",
                   buffer->size() == 0 ? " before it answered" : " in the middle of a response"));
      }
      *nothing_received = false;
      buffer->Commit(static_cast<size_t>(n));
    }
    have_unparsed = false;
    if (buffer->size() > options_.max_response_bytes) {
      Close();
      return absl::ResourceExhaustedError(
          StrCat("response from ", authority_, " exceeds ", options_.max_response_bytes, " bytes"));
    }

    if (!have_head) {
      absl::StatusOr<bool> parsed = ParseHttpResponseHead(buffer->view(), &response.head);
      if (!parsed.ok()) {
        Close();
        return parsed.status();
      }
      if (!*parsed) continue;
      if (response.head.status >= 100 && response.head.status < 200) {
        const size_t interim = response.head.head_bytes;
        if (raw) {
          // The caller sees the interim answer (it may be waiting for 100 Continue).
          response.body_offset = interim;
          BRIGADE_RETURN_IF_ERROR(keep_surplus(interim));
          buffer->Truncate(interim);
          return response;
        }
        // An interim answer (100 Continue): drop it and wait for the real one.
        std::memmove(buffer->data(), buffer->data() + interim, buffer->size() - interim);
        buffer->Truncate(buffer->size() - interim);
        have_unparsed = buffer->size() > 0;
        continue;
      }
      have_head = true;
      if (StatusHasNoBody(response.head.status)) {
        total_bytes = response.head.head_bytes;
      } else if (response.head.content_length.has_value()) {
        if (*response.head.content_length > options_.max_response_bytes) {
          Close();
          return absl::ResourceExhaustedError(
              StrCat("response from ", authority_, " declares ", *response.head.content_length,
                     " bytes, over the limit of ", options_.max_response_bytes));
        }
        total_bytes = response.head.head_bytes + *response.head.content_length;
        if (*total_bytes > buffer->size()) buffer->Reserve(*total_bytes - buffer->size());
      }
    }

    if (total_bytes.has_value()) {
      if (buffer->size() < *total_bytes) continue;
      BRIGADE_RETURN_IF_ERROR(keep_surplus(*total_bytes));
      buffer->Truncate(*total_bytes);
      response.body_offset = response.head.head_bytes;
      response.body_bytes = *total_bytes - response.head.head_bytes;
      break;
    }
    if (response.head.chunked) {
      const size_t raw_bytes = buffer->size() - response.head.head_bytes;
      absl::StatusOr<std::optional<ChunkedBody>> decoded =
          DecodeChunkedInPlace(buffer->data() + response.head.head_bytes, raw_bytes);
      if (!decoded.ok()) {
        Close();
        return decoded.status();
      }
      if (!decoded->has_value()) continue;
      BRIGADE_RETURN_IF_ERROR(keep_surplus(response.head.head_bytes + (*decoded)->consumed_bytes));
      response.body_offset = response.head.head_bytes;
      response.body_bytes = (*decoded)->body_bytes;
      buffer->Truncate(response.head.head_bytes + response.body_bytes);
      break;
    }
  }
  if (response.head.close && !raw) Close();
  return response;
}

absl::StatusOr<HttpResponse> HttpConnection::RoundTrip(std::span<const iovec> parts,
                                                       ReceiveBuffer* buffer) {
  const bool reused = fd_ >= 0;
  if (!reused) BRIGADE_RETURN_IF_ERROR(Connect());
  absl::Status sent = SendAll(parts, /*raw=*/false);
  bool nothing_received = true;
  if (sent.ok()) {
    absl::StatusOr<HttpResponse> response = Receive(buffer, /*raw=*/false, &nothing_received);
    if (response.ok() || !reused || !nothing_received ||
        response.status().code() == absl::StatusCode::kDeadlineExceeded) {
      return response;
    }
  } else if (!reused || sent.code() == absl::StatusCode::kDeadlineExceeded) {
    return sent;
  }
  // The server had closed the idle connection: one more try on a fresh one.
  BRIGADE_RETURN_IF_ERROR(Connect());
  BRIGADE_RETURN_IF_ERROR(SendAll(parts, /*raw=*/false));
  return Receive(buffer, /*raw=*/false, &nothing_received);
}

absl::Status HttpConnection::Open() {
  if (fd_ >= 0) return absl::OkStatus();
  peer_closed_ = false;
  carry_.clear();
  return Connect();
}

absl::Status HttpConnection::SendRaw(std::string_view bytes) {
  BRIGADE_RETURN_IF_ERROR(Open());
  const iovec part{const_cast<char*>(bytes.data()), bytes.size()};
  return SendAll(std::span<const iovec>(&part, 1), /*raw=*/true);
}

void HttpConnection::SetReceiveTimeout(int64_t timeout_ms) {
  const timeval tv = ToTimeval(timeout_ms);
  setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

absl::StatusOr<HttpResponse> HttpConnection::ReadResponse(ReceiveBuffer* buffer,
                                                          int64_t timeout_ms) {
  if (fd_ < 0) {
    return absl::UnavailableError(StrCat("connection to ", authority_, " is not open"));
  }
  SetReceiveTimeout(timeout_ms);
  bool nothing_received = true;
  absl::StatusOr<HttpResponse> response = Receive(buffer, /*raw=*/true, &nothing_received);
  if (fd_ >= 0) SetReceiveTimeout(options_.timeout_ms);
  return response;
}

bool HttpConnection::WaitForClose(int64_t timeout_ms) {
  if (peer_closed_) return true;
  if (fd_ < 0) return false;
  carry_.clear();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  char scratch[4096];
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd poll_fd{fd_, POLLIN, 0};
    const int ready = ::poll(&poll_fd, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return false;
    const ssize_t n = ::recv(fd_, scratch, sizeof(scratch), MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (n <= 0) {
      peer_closed_ = true;
      Close();
      return true;
    }
  }
}

}  // namespace brigade::net
