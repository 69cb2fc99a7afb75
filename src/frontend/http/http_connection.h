#ifndef BRIGADE_FRONTEND_HTTP_HTTP_CONNECTION_H_
#define BRIGADE_FRONTEND_HTTP_HTTP_CONNECTION_H_

// HttpConnection: one accepted TCP connection of HttpServer — parsing requests off the socket,
// dispatching them to the handler, writing answers back in order, timeouts, disconnects and
// draining. Internal to the transport (see http_server.h for the behaviour it implements).
//
// Threading: every member function except the ResponseChannel ones runs on the connection's
// IoThread; the ResponseChannel ones may be called from any thread and hop onto it. There is no
// lock: the IoThread is the connection's only executor.
//
// Lifetime: shared. Pending operations and responders hold it; the socket is closed by Close(),
// after which late answers are dropped and the object goes away with its last holder.
//
// TLS: with a context, the bytes go through an ssl::stream over the socket (a flat_stream in
// front of it, so that an answer's head and body parts leave as one TLS record rather than one
// each); the handshake comes first and nothing is read or written before it completes. Socket
// operations (shutdown, close, available) stay on the TCP socket.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <utility>  // before Asio: Boost 1.74 Asio misses it under C++20 with g++ 12
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "boost/asio/ip/tcp.hpp"
#include "boost/asio/ssl/context.hpp"
#include "boost/asio/ssl/stream.hpp"
#include "boost/asio/steady_timer.hpp"
#include "boost/beast/core/buffers_range.hpp"
#include "boost/beast/core/flat_buffer.hpp"
#include "boost/beast/core/flat_stream.hpp"
#include "boost/beast/http/parser.hpp"
#include "frontend/http/http_handler.h"
#include "frontend/http/http_server.h"
#include "frontend/http/http_server_state.h"
#include "frontend/http/io_thread.h"
#include "protocol/http/body_buffer.h"

namespace brigade::frontend {

// A Beast body type that reads into a BodyBuffer (used for chunked bodies only: bodies with a
// Content-Length bypass the parser and are read directly).
struct BodyBufferBody {
  using value_type = std::shared_ptr<protocol::http::BodyBuffer>;

  class reader {  // NOLINT(readability-identifier-naming): Beast's Body concept names it
   public:
    template <bool kIsRequest, class Fields>
    reader(boost::beast::http::header<kIsRequest, Fields>&, value_type& body) : body_(body) {}
    void init(const boost::optional<std::uint64_t>&, boost::beast::error_code& ec) { ec = {}; }
    template <class ConstBufferSequence>
    std::size_t put(const ConstBufferSequence& buffers, boost::beast::error_code& ec);
    void finish(boost::beast::error_code& ec) { ec = {}; }

   private:
    value_type& body_;
  };
};

class HttpConnection final : public ResponseChannel,
                             public std::enable_shared_from_this<HttpConnection> {
 public:
  // `tls`: the context to handshake with (held for the connection's life); null for plain HTTP.
  HttpConnection(boost::asio::ip::tcp::socket socket, std::shared_ptr<IoThread> io,
                 std::shared_ptr<HttpServerState> state,
                 std::shared_ptr<boost::asio::ssl::context> tls);
  ~HttpConnection() override;

  const std::shared_ptr<IoThread>& io() const { return io_; }

  // On the io thread: begins reading (the acceptor registered it already). If the server is
  // draining, what the client sent before it could know is answered, then it closes. The
  // connection holds one reservation (HttpServerState::ReserveConnection) and releases it when it
  // closes.
  void Start();
  // On the io thread, for a connection over the limit (it holds no reservation): answers 503
  // with `Connection: close` without reading a request, lingers briefly, then closes.
  void Refuse();
  // On the io thread: no new requests beyond the one partly read or already waiting in the
  // socket; close once the ones received are answered (the last says `Connection: close`).
  void BeginDrain();
  // On the io thread, at the drain deadline: answers every request still unanswered 503 and
  // cancels its handler, drops a request partly read, and closes once that is written. Returns
  // how many requests were answered so.
  size_t AbortUnanswered();
  // On the io thread: closes the socket now, cancelling unanswered requests.
  void Close();

  // ResponseChannel: any thread.
  void Deliver(uint64_t request_id, HttpResponse response) override;
  void DeliverFrom(uint64_t request_id, absl::AnyInvocable<HttpResponse()> make) override;
  void SetCancelCallback(uint64_t request_id, absl::AnyInvocable<void()> on_cancel) override;

 private:
  using Parser = boost::beast::http::request_parser<BodyBufferBody>;
  using TimePoint = std::chrono::steady_clock::time_point;
  enum class HeaderAction { kParseBody, kComplete, kWait };

  // One request's place in the answer order (or an interim 100 Continue).
  struct Slot {
    uint64_t id = 0;  // 0: interim response
    bool ready = false;
    bool close_after = false;
    bool head_only = false;
    bool http10_keep_alive = false;
    int64_t arrival_ns = 0;
    HttpResponse response;
    absl::AnyInvocable<void()> on_cancel;

    static Slot Interim() {
      Slot slot;
      slot.ready = true;
      return slot;
    }
  };

  using TlsStream =
      boost::beast::flat_stream<boost::asio::ssl::stream<boost::asio::ip::tcp::socket&>>;

  // TLS: handshakes (bounded by the read timer), then runs `then` on success; closes on failure.
  void Handshake(void (HttpConnection::*then)());
  void Serve();
  void AnswerRefused();
  // Whether bytes of the client wait to be read: in the socket or, under TLS, in OpenSSL.
  bool InputPending();

  // Reading and parsing.
  void ProcessInput();
  void ReadMore();
  void OnRead(const boost::system::error_code& error, size_t bytes);
  void OnReadError(const boost::system::error_code& error);
  // The drain's end of reading: the request last read is the last answered; idle closes.
  void StopReadingForDrain();
  void StartRequest();
  HeaderAction OnHeader();
  void ReadHead();
  void ReadBody();
  void OnBodyRead(const boost::system::error_code& error, size_t bytes);
  void Dispatch();
  // Answers `status` (with Retry-After: 1 when `retry_later`) and closes after it.
  void Reject(int status, std::string_view message, bool retry_later = false);
  void RejectParseError(const boost::system::error_code& error);
  // 503 with Retry-After for a body of `body_bytes` (so far) that the memory budget refused.
  void RejectOverBudget(uint64_t body_bytes);
  // The head's limits Beast does not check itself (request line, field count); false when the
  // request was rejected.
  bool CheckHeadLimits();

  // Answers and writing.
  void Complete(uint64_t request_id, absl::AnyInvocable<HttpResponse()> make,
                HttpResponse* response);
  Slot* FindSlot(uint64_t request_id);
  void MaybeWrite();
  void OnWrite(const boost::system::error_code& error);
  void CancelUnanswered();
  void CloseAfterWrite();

  // Timers: one for the read side (idle / request / linger deadline), one for writes. Both are
  // lazy: moving a deadline later does not touch the timer; it re-checks when it fires.
  TimePoint ReadDeadline() const;
  void ArmReadTimer();
  void OnReadTimer(const boost::system::error_code& error);
  void ArmWriteTimer();
  void OnWriteTimer(const boost::system::error_code& error);

  const std::shared_ptr<IoThread> io_;  // first: outlives the socket and timers bound to it
  const std::shared_ptr<HttpServerState> state_;
  const HttpServer::Options& options_;
  boost::asio::ip::tcp::socket socket_;
  const std::shared_ptr<boost::asio::ssl::context> tls_context_;
  std::optional<TlsStream> tls_;  // over socket_; set iff tls_context_ is
  boost::asio::steady_timer read_timer_;
  boost::asio::steady_timer write_timer_;
  boost::beast::flat_buffer buffer_;

  // The request being read: the parser, then (from the end of the head) the request itself.
  std::optional<Parser> parser_;
  HttpRequest request_;
  std::shared_ptr<protocol::http::BodyBuffer> body_;  // Content-Length body being read directly
  bool request_started_ = false;
  bool header_seen_ = false;
  int64_t arrival_ns_ = 0;
  int64_t last_read_ns_ = 0;
  TimePoint request_started_at_;

  // Answers in request order.
  std::deque<Slot> slots_;
  uint64_t next_id_ = 1;
  std::vector<std::string> write_heads_;
  std::vector<boost::asio::const_buffer> write_buffers_;
  size_t write_count_ = 0;
  TimePoint write_started_at_;

  bool reading_ = false;       // a socket read is in flight
  bool reading_body_ = false;  // ... and it is a direct body read
  bool read_closed_ = false;   // no further requests will be read
  bool paused_ = false;        // too many unanswered requests: reading paused
  bool peer_gone_ = false;     // the client closed or reset its side
  bool draining_ = false;
  // BeginDrain cancelled the read in flight to learn whether it holds a request (OnRead).
  bool drain_read_cancelled_ = false;
  bool lingering_ = false;
  bool writing_ = false;
  bool closed_ = false;
  bool reserved_ = false;  // holds a place among max_connections
  bool refused_ = false;   // over max_connections: answered 503, lingers briefly
  bool handshaking_ = false;
  TimePoint handshake_until_;
  // The verified client certificate's names (tls/peer_names.h), shared by the connection's
  // requests; null without one.
  std::shared_ptr<const std::vector<std::string>> peer_names_;
  TimePoint idle_since_;
  TimePoint linger_until_;
  bool read_timer_armed_ = false;
  TimePoint read_timer_at_;
  bool write_timer_armed_ = false;
};

template <class ConstBufferSequence>
std::size_t BodyBufferBody::reader::put(const ConstBufferSequence& buffers,
                                        boost::beast::error_code& ec) {
  if (body_ == nullptr) body_ = protocol::http::BodyBuffer::Allocate(4096);
  std::size_t used = 0;
  for (const auto buffer : boost::beast::buffers_range_ref(buffers)) {
    const std::span<const std::byte> bytes(static_cast<const std::byte*>(buffer.data()),
                                           buffer.size());
    // The parser enforces the body limit before handing bytes over; this only fails on memory.
    if (body_ == nullptr || !body_->Append(bytes, SIZE_MAX)) {
      ec = boost::beast::http::error::buffer_overflow;
      return used;
    }
    used += buffer.size();
  }
  ec = {};
  return used;
}

}  // namespace brigade::frontend

#endif  // BRIGADE_FRONTEND_HTTP_HTTP_CONNECTION_H_
