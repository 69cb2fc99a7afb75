#ifndef BRIGADE_FRONTEND_HTTP_HTTP_SERVER_H_
#define BRIGADE_FRONTEND_HTTP_HTTP_SERVER_H_

// HttpServer: a small HTTP/1.1 server (Boost.Beast's parser on Asio) that moves requests to an
// HttpHandler and the handler's responses back. It knows nothing about KServe.
//
//   * One acceptor; connections are spread round-robin over `io_threads` threads, each running
//     its own io_context, so one connection is only ever touched by one thread. TCP_NODELAY on.
//   * Keep-alive and pipelining: requests on a connection are dispatched as they arrive (up to
//     `max_pipelined_requests` unanswered, then reading pauses) and answered strictly in order;
//     answers that are ready together go out in one write. `Connection: close` is honoured.
//   * Bodies: a Content-Length body is read straight into a BodyBuffer of that size (no
//     intermediate copy); chunked bodies go through the parser. A declared length over
//     `max_body_bytes` is answered 413 without reading the body, then the connection is closed.
//     `Expect: 100-continue` is answered before the body is read.
//   * Errors the transport detects itself: malformed HTTP → 400, a head over `max_header_bytes`
//     or with more than `max_header_count` fields → 431, a request line over
//     `max_request_line_bytes` → 414, a head not complete `header_timeout` after its first byte
//     or a request not complete `read_timeout` after it → 408; each closes the connection after
//     its response. Idle connections close after `idle_timeout`; a response that cannot be
//     written within `write_timeout` closes its connection.
//   * Memory per connection is bounded before the body: the bytes held unparsed never exceed
//     `max_header_bytes` plus one read (16 KiB), whether they are a head, a chunk-size line with
//     its extensions, or a chunked body's trailer (over it: 431). Bodies are bounded by
//     `max_body_bytes`, pipelining by `max_pipelined_requests`. Across connections, bodies are
//     charged to `memory_budget` before they are allocated, and hold their charge for as long
//     as the body (or a tensor borrowing it) lives; one that does not fit is answered 503 with
//     `Retry-After` and its connection closed, so the process's request memory stays bounded
//     whatever the number of connections.
//   * Connections: at most `max_connections` open at once; one more is accepted, answered 503
//     with `Connection: close` and closed (counted in `refused_connections`), so the client
//     learns why instead of waiting in the listen queue.
//   * TLS (`tls` set): every connection first completes a TLS handshake (1.2 or later) with the
//     context `tls` holds when the connection is accepted, within `header_timeout`; a client
//     that fails it (a plain-HTTP client, no client certificate under mutual TLS, a bad one) is
//     closed without an answer and counted in `tls_handshake_failures`. Everything above then
//     holds over TLS; a connection closed after a response sends TLS close_notify and lingers
//     as over plain TCP. A connection over `max_connections` handshakes (within 1 s) to be told
//     503.
//   * Stage stamps: a request's t0 (HttpRequest::arrival_ns) is when its first byte was read;
//     t5 is reported through HttpResponse::on_sent once the last byte is written.
//   * Disconnects: when the client goes away (EOF or error) with requests unanswered, the cancel
//     callbacks their handlers registered run. An EOF is treated as the client leaving (as Go's
//     net/http does); answers already produced are still written, in case it only half-closed.
//
// Thread safety: Create/Shutdown/destruction from one owner thread; port() from any.
// Lifetime: `handler` is borrowed and must outlive the server (requests are only dispatched while
// it runs). Responders may outlive it; their answers are then discarded.
// Failure: Create returns INVALID_ARGUMENT for bad options and UNAVAILABLE when the address
// cannot be bound.

#include <sys/socket.h>  // SOMAXCONN

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/clock.h"
#include "core/memory_budget.h"
#include "frontend/http/http_handler.h"
#include "telemetry/counter.h"

namespace brigade::frontend {

class HttpTlsContext;

class HttpServer {
 public:
  struct Options {
    // Address to listen on; "0.0.0.0" for all IPv4 interfaces, "::" for all of IPv6 and IPv4.
    std::string address = "0.0.0.0";
    // 0 picks a free port (read it back with port()).
    int port = 8000;
    // Threads running connections. Two keep the transport off the critical path on small hosts
    // without competing with the compute threads; raise it with the core count.
    int io_threads = 2;
    // Largest request body; beyond it the request gets 413 (Triton's default: 64 MiB).
    size_t max_body_bytes = size_t{64} << 20;
    // Largest request line plus headers; beyond it the request gets 431. Also bounds a chunked
    // body's chunk-size lines (with their extensions) and its trailer.
    uint32_t max_header_bytes = 16 * 1024;
    // Most header fields in one head; beyond it the request gets 431.
    uint32_t max_header_count = 100;
    // Longest request line (method, target, version); beyond it the request gets 414.
    uint32_t max_request_line_bytes = 8 * 1024;
    // Open connections at once; one more is answered 503 and closed. 0 = no limit.
    int max_connections = 4096;
    // A request's head must be received this long after its first byte (else 408): a client
    // trickling its headers (slowloris) holds a connection no longer than this.
    absl::Duration header_timeout = absl::Seconds(10);
    // A connection without a request in progress or in flight is closed after this long.
    absl::Duration idle_timeout = absl::Seconds(60);
    // A request must be fully received this long after its first byte (else 408).
    absl::Duration read_timeout = absl::Seconds(30);
    // A response must be fully handed to the kernel this long after its write began.
    absl::Duration write_timeout = absl::Seconds(30);
    // How long a connection being closed after a response keeps reading (and discarding) what
    // the client still sends, so the client reads the response instead of a reset.
    absl::Duration linger_timeout = absl::Seconds(2);
    // Unanswered requests per connection before the server stops reading from it.
    int max_pipelined_requests = 16;
    // listen() backlog; the kernel caps it at net.core.somaxconn.
    int backlog = SOMAXCONN;
    // Source of t0/t5 stamps. Timeouts use the real steady clock regardless.
    const Clock* clock = Clock::Real();
    // Counts connections refused for `max_connections`; borrowed, outlives the server; may be
    // null.
    telemetry::Counter* refused_connections = nullptr;
    // TLS on every connection; null: plain HTTP. Shared with whoever rotates its certificate.
    std::shared_ptr<HttpTlsContext> tls{};
    // Counts failed TLS handshakes; borrowed, outlives the server; may be null.
    telemetry::Counter* tls_handshake_failures = nullptr;
    // The process's in-flight budget that request bodies are charged to before they are read
    // (one past it is answered 503 without reading its body, then the connection is closed);
    // null: bodies are bounded only one by one, by `max_body_bytes`. Borrowed; outlives the
    // server and every request it handed on.
    MemoryBudget* memory_budget = nullptr;
    // Counts bodies refused by `memory_budget`; borrowed, outlives the server; may be null.
    telemetry::Counter* memory_budget_refusals = nullptr;
  };

  static absl::StatusOr<std::unique_ptr<HttpServer>> Create(Options options, HttpHandler* handler);
  class Impl;
  // Use Create(); public only for std::make_unique (Impl is private to http_server.cc).
  explicit HttpServer(std::unique_ptr<Impl> impl);
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;
  // Shutdown(absl::ZeroDuration()) if Shutdown was not called.
  ~HttpServer();

  // The bound port.
  int port() const;

  // Graceful stop: stops accepting, closes idle connections at once, lets requests already
  // received — or already in the socket, even partly — finish (their last response says
  // `Connection: close`) for up to `drain_timeout`, then answers whatever is still unanswered 503
  // (cancelling its handlers), closes the rest and stops the io threads. Blocks until done;
  // idempotent. Returns how many requests were answered 503 that way (0 on later calls).
  size_t Shutdown(absl::Duration drain_timeout);

  // Connections currently open (for tests and metrics).
  size_t open_connections() const;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace brigade::frontend

#endif  // BRIGADE_FRONTEND_HTTP_HTTP_SERVER_H_
