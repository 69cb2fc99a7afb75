#ifndef BRIGADE_NET_HTTP_CONNECTION_H_
#define BRIGADE_NET_HTTP_CONNECTION_H_

// HttpConnection: Brigade's HTTP/1.1 client. One keep-alive connection over a blocking TCP socket
// (TCP_NODELAY), carrying one request at a time: RoundTrip() writes a request with a single
// sendmsg() of the caller's parts (gathered, not copied) and reads the whole response into a
// ReceiveBuffer. Every client-side user goes through it: the KServe client (the load generator's
// hot path), the OTLP exporter, and the tests that drive a server byte by byte (raw mode below).
//
// Connection management: the socket is opened on the first RoundTrip and kept; it is closed when
// the server says `Connection: close`, on any transport error and on a timeout (a late answer
// must not be read as the next one). When a reused connection turns out to have been closed by
// the server before it read the request (send fails, or EOF/reset before any response byte), the
// request is sent once more on a fresh connection: that is the keep-alive race every HTTP client
// handles, and the server cannot have acted on the request.
//
// Raw mode (Open, SendRaw, ReadResponse, WaitForClose), for tests of servers: the caller writes
// whatever bytes it likes (malformed requests, several pipelined requests, a request in pieces)
// and reads the answers one by one. Nothing is retried or closed behind the caller's back: bytes
// past one response are kept for the next ReadResponse, a timeout keeps the connection and what
// had arrived, interim (1xx) responses are returned, and `Connection: close` is left for the
// caller to check with WaitForClose. Raw mode and RoundTrip are not mixed on one connection.
//
// TLS (`tls` set): after connecting, a TLS handshake (1.2 or later) that verifies the server's
// certificate and that it names `host` (an IP address must be in its subjectAltName); bytes then
// go through OpenSSL (a request's parts gathered into one TLS record when they are small) and a
// close sends close_notify. Handshake failures are UNAVAILABLE with OpenSSL's reason.
//
// Timeouts: `timeout_ms` bounds each wait for the socket (connect, each send, each receive), via
// SO_SNDTIMEO / SO_RCVTIMEO; 0 waits forever.
//
// Thread safety: none; one thread at a time. Failure: UNAVAILABLE (cannot connect, connection
// lost), DEADLINE_EXCEEDED (timeout), RESOURCE_EXHAUSTED (response over max_response_bytes),
// INTERNAL (not HTTP/1.x).

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "net/http_response_parser.h"
#include "net/receive_buffer.h"
#include "net/tls_client_context.h"

struct addrinfo;
typedef struct ssl_st SSL;

namespace brigade::net {

struct HttpResponse {
  HttpResponseHead head;
  // The (decoded) body within the receive buffer.
  size_t body_offset = 0;
  size_t body_bytes = 0;
};

class HttpConnection {
 public:
  struct Options {
    std::string host;
    int port = 80;
    int64_t timeout_ms = 60'000;
    size_t max_response_bytes = size_t{1} << 30;
    // HTTPS with this context; null: plain HTTP.
    std::shared_ptr<const TlsClientContext> tls{};
  };

  // Resolves the host (INVALID_ARGUMENT when it does not resolve); does not connect.
  static absl::StatusOr<std::unique_ptr<HttpConnection>> Create(Options options);

  struct AddrInfoDeleter {
    void operator()(addrinfo* info) const;
  };
  // Use Create(); the key keeps construction inside this class while allowing make_unique.
  class Key {
    friend class HttpConnection;
    Key() = default;
  };
  HttpConnection(Key, Options options, std::unique_ptr<addrinfo, AddrInfoDeleter> addresses);
  ~HttpConnection();
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  // "host:port" as a Host header value.
  const std::string& authority() const { return authority_; }

  // Sends the request made of `parts` and receives its response into `buffer` (cleared first).
  absl::StatusOr<HttpResponse> RoundTrip(std::span<const iovec> parts, ReceiveBuffer* buffer);

  void Close();
  bool connected() const { return fd_ >= 0; }

  // Raw mode (see the contract above).
  // Connects now unless connected.
  absl::Status Open();
  // Writes `bytes` as they are; a failure leaves what the peer already sent readable.
  absl::Status SendRaw(std::string_view bytes);
  // Reads the next response (an interim 1xx one included) into `buffer`, waiting at most
  // `timeout_ms` for each receive. DEADLINE_EXCEEDED keeps the connection and the bytes so far.
  absl::StatusOr<HttpResponse> ReadResponse(ReceiveBuffer* buffer, int64_t timeout_ms);
  // True when the peer closes the connection (EOF or reset) within `timeout_ms`, or had already
  // closed it; what it sends meanwhile is discarded.
  bool WaitForClose(int64_t timeout_ms);

 private:
  absl::Status Connect();
  // The TLS handshake on fd_.
  absl::Status StartTls();
  // recv(), or SSL_read() under TLS, with recv's results (0: EOF; -1 and errno, EPROTO for a TLS
  // failure whose reason is in tls_error_).
  ssize_t ReadSome(void* data, size_t size);
  // `raw`: a failure does not close the socket.
  absl::Status SendAll(std::span<const iovec> parts, bool raw);
  // Reads one response; `*nothing_received` tells whether the failure happened before its
  // first byte. `raw` selects raw mode's rules.
  absl::StatusOr<HttpResponse> Receive(ReceiveBuffer* buffer, bool raw, bool* nothing_received);
  absl::Status SocketError(std::string_view action, int error);
  void SetReceiveTimeout(int64_t timeout_ms);

  const Options options_;
  const std::string authority_;
  std::unique_ptr<addrinfo, AddrInfoDeleter> addresses_;
  int fd_ = -1;
  // Scratch copy of the caller's iovecs, advanced over partial writes.
  std::vector<iovec> pending_;
  // Raw mode: bytes received past the last response (or before a timeout), read first next time.
  std::string carry_;
  // Raw mode: the peer closed the connection (seen as EOF or a reset).
  bool peer_closed_ = false;
  // The TLS session on fd_ (null without TLS), and the reason of its last failure.
  SSL* ssl_ = nullptr;
  std::string tls_error_;
  // A small request's parts, gathered for one SSL_write.
  std::string gathered_;
};

}  // namespace brigade::net

#endif  // BRIGADE_NET_HTTP_CONNECTION_H_
