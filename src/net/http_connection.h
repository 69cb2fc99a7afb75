#ifndef BRIGADE_NET_HTTP_CONNECTION_H_
#define BRIGADE_NET_HTTP_CONNECTION_H_

// HttpConnection: Brigade's HTTP/1.1 client. One keep-alive connection over a blocking TCP socket
// (TCP_NODELAY), carrying one request at a time: RoundTrip() writes a request with a single
// sendmsg() of the caller's parts (gathered, not copied) and reads the whole response into a
// ReceiveBuffer. Every client-side user goes through it; the KServe client (the load generator's
// hot path) is the first.
//
// Connection management: the socket is opened on the first RoundTrip and kept; it is closed when
// the server says `Connection: close`, on any transport error and on a timeout (a late answer
// must not be read as the next one). When a reused connection turns out to have been closed by
// the server before it read the request (send fails, or EOF/reset before any response byte), the
// request is sent once more on a fresh connection: that is the keep-alive race every HTTP client
// handles, and the server cannot have acted on the request.
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
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "net/http_response_parser.h"
#include "net/receive_buffer.h"

struct addrinfo;

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

 private:
  absl::Status Connect();
  absl::Status SendAll(std::span<const iovec> parts);
  // Reads one response; `*nothing_received` tells whether the failure happened before its
  // first byte.
  absl::StatusOr<HttpResponse> Receive(ReceiveBuffer* buffer, bool* nothing_received);
  absl::Status SocketError(std::string_view action, int error);

  const Options options_;
  const std::string authority_;
  std::unique_ptr<addrinfo, AddrInfoDeleter> addresses_;
  int fd_ = -1;
  // Scratch copy of the caller's iovecs, advanced over partial writes.
  std::vector<iovec> pending_;
};

}  // namespace brigade::net

#endif  // BRIGADE_NET_HTTP_CONNECTION_H_
