#include "frontend/http/http_connection.h"

#include <algorithm>
#include <exception>
#include <utility>

#include "boost/asio/buffer.hpp"
#include "boost/asio/read.hpp"
#include "boost/asio/ssl/error.hpp"
#include "boost/asio/write.hpp"
#include "boost/beast/http/error.hpp"
#include "core/http_tokens.h"
#include "core/strings.h"
#include "frontend/tls/peer_names.h"

namespace brigade::frontend {
namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using boost::system::error_code;
using Clock = std::chrono::steady_clock;

// Bytes asked of the socket per read while looking for a request head.
constexpr size_t kReadChunkBytes = size_t{16} * 1024;
// Answers coalesced into one write at most.
constexpr size_t kMaxAnswersPerWrite = 16;
constexpr Clock::time_point kNever = Clock::time_point::max();
// How long a connection refused for the connection limit keeps discarding what the client sends.
constexpr absl::Duration kRefusedLinger = absl::Milliseconds(100);
// How long a TLS connection refused for the connection limit may take to handshake.
constexpr absl::Duration kRefusedHandshake = absl::Seconds(1);

constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";

bool IsTransportHeader(std::string_view name) {
  return EqualsIgnoreCase(name, "Content-Length") || EqualsIgnoreCase(name, "Connection") ||
         EqualsIgnoreCase(name, "Transfer-Encoding");
}

bool IsSafeHeaderText(std::string_view text) {
  return text.find_first_of("\r\n") == std::string_view::npos;
}

// Writes the status line and headers into `out`, replacing what it held: the connection reuses
// the string (and its capacity) for every answer it writes.
void FormatHead(const HttpResponse& response, bool close, bool http10_keep_alive,
                std::string* out) {
  std::string& head = *out;
  head.clear();
  head.reserve(128 + response.headers.size() * 48);
  head.append("HTTP/1.1 ");
  head.append(std::to_string(response.status));
  head.push_back(' ');
  head.append(ReasonPhrase(response.status));
  head.append("\r\n");
  for (const HttpHeader& header : response.headers) {
    if (IsTransportHeader(header.name) || !IsSafeHeaderText(header.name) ||
        !IsSafeHeaderText(header.value)) {
      continue;
    }
    head.append(header.name);
    head.append(": ");
    head.append(header.value);
    head.append("\r\n");
  }
  head.append("Content-Length: ");
  head.append(std::to_string(response.content_length()));
  head.append("\r\n");
  if (close) {
    head.append("Connection: close\r\n");
  } else if (http10_keep_alive) {
    head.append("Connection: keep-alive\r\n");
  }
  head.append("\r\n");
}

std::string_view AsStd(boost::beast::string_view text) { return {text.data(), text.size()}; }

bool ExpectsContinue(const http::request_header<>& message) {
  const auto expect = message.find(http::field::expect);
  return expect != message.end() && EqualsIgnoreCase(AsStd(expect->value()), "100-continue") &&
         message.version() >= 11;
}

}  // namespace

// ---------------------------------------------------------------------------- HttpConnection

HttpConnection::HttpConnection(asio::ip::tcp::socket socket, std::shared_ptr<IoThread> io,
                               std::shared_ptr<HttpServerState> state,
                               std::shared_ptr<asio::ssl::context> tls)
    : io_(std::move(io)),
      state_(std::move(state)),
      options_(state_->options()),
      socket_(std::move(socket)),
      tls_context_(std::move(tls)),
      read_timer_(io_->context()),
      write_timer_(io_->context()) {
  if (tls_context_ != nullptr) tls_.emplace(socket_, *tls_context_);
}

HttpConnection::~HttpConnection() = default;

void HttpConnection::Start() {
  if (closed_) {  // closed by shutdown before it could start: give its place back
    state_->ReleaseConnection();
    return;
  }
  reserved_ = true;  // the acceptor registered it and took its place
  if (tls_.has_value()) {
    Handshake(&HttpConnection::Serve);
    return;
  }
  Serve();
}

void HttpConnection::Serve() {
  idle_since_ = Clock::now();
  // Accepted as the drain began: what the client sent before it could know is read and
  // answered; an idle connection closes. Checked before the first read is started, which may
  // take the bytes off the socket where BeginDrain looks for them.
  if (!draining_ && state_->draining()) {
    BeginDrain();
    if (closed_) return;
  }
  ProcessInput();
}

void HttpConnection::Refuse() {
  refused_ = true;
  read_closed_ = true;
  if (tls_.has_value()) {
    Handshake(&HttpConnection::AnswerRefused);
    return;
  }
  AnswerRefused();
}

void HttpConnection::Handshake(void (HttpConnection::*then)()) {
  handshaking_ = true;
  handshake_until_ =
      Clock::now() +
      absl::ToChronoNanoseconds(refused_ ? std::min(options_.header_timeout, kRefusedHandshake)
                                         : options_.header_timeout);
  ArmReadTimer();
  tls_->next_layer().async_handshake(
      asio::ssl::stream_base::server, [self = shared_from_this(), then](const error_code& error) {
        self->handshaking_ = false;
        if (self->closed_) return;
        if (error) {
          if (self->options_.tls_handshake_failures != nullptr) {
            self->options_.tls_handshake_failures->Add();
          }
          self->Close();  // not a TLS client, or one the context refuses: nobody to answer
          return;
        }
        std::vector<std::string> names =
            tls::VerifiedPeerNames(self->tls_->next_layer().native_handle());
        if (!names.empty()) {
          self->peer_names_ = std::make_shared<const std::vector<std::string>>(std::move(names));
        }
        ((*self).*then)();
      });
}

bool HttpConnection::InputPending() {
  error_code ignored;
  if (buffer_.size() > 0 || socket_.available(ignored) > 0) return true;
  if (!tls_.has_value()) return false;
  SSL* ssl = tls_->next_layer().native_handle();
  return SSL_has_pending(ssl) == 1 || BIO_ctrl_pending(SSL_get_rbio(ssl)) > 0;
}

void HttpConnection::AnswerRefused() {
  Slot slot;
  slot.id = next_id_++;
  slot.ready = true;
  slot.close_after = true;
  slot.response =
      state_->handler()->TransportError(503, StrCat("the server has ", options_.max_connections,
                                                    " connections open, its limit; retry later"));
  slot.response.headers.push_back({"Retry-After", "1"});
  slots_.push_back(std::move(slot));
  MaybeWrite();
}

// ------------------------------------------------------------------- reading and parsing

void HttpConnection::ProcessInput() {
  while (!read_closed_ && !paused_ && !reading_) {
    if (buffer_.size() == 0) {
      ReadMore();
      return;
    }
    if (!request_started_) StartRequest();
    boost::beast::error_code error;
    const size_t used = parser_->put(buffer_.data(), error);
    buffer_.consume(used);
    if (error == http::error::need_more) {
      // Past the head, Beast waits for a chunk-size line (with its extensions) or the trailer
      // to end without any bound of its own: without this check a line that never ends grows
      // the buffer until the read timeout.
      if (header_seen_ && buffer_.size() > options_.max_header_bytes) {
        Reject(431, StrCat("chunk-size line or trailer exceeds the limit of ",
                           options_.max_header_bytes, " bytes"));
        return;
      }
      ReadMore();
      return;
    }
    if (error) {
      RejectParseError(error);
      return;
    }
    if (!header_seen_ && parser_->is_header_done()) {
      header_seen_ = true;
      const HeaderAction action = OnHeader();
      if (action == HeaderAction::kWait) return;
      if (action == HeaderAction::kComplete) {
        Dispatch();
        continue;
      }
    }
    if (parser_->is_done()) Dispatch();
  }
}

void HttpConnection::StartRequest() {
  parser_.emplace();
  parser_->header_limit(options_.max_header_bytes);
  parser_->body_limit(options_.max_body_bytes);
  parser_->eager(false);  // stop after the head, so OnHeader runs before any body is consumed
  request_started_ = true;
  header_seen_ = false;
  // Its first bytes came with the latest read (an earlier request ended inside that read).
  arrival_ns_ = last_read_ns_;
  request_started_at_ = Clock::now();
  ArmReadTimer();
}

void HttpConnection::ReadMore() {
  if (reading_ || closed_) return;
  reading_ = true;
  ArmReadTimer();
  auto on_read = [self = shared_from_this()](const error_code& error, size_t bytes) {
    self->OnRead(error, bytes);
  };
  // Lingering discards what arrives: no need to decrypt it.
  if (tls_.has_value() && !lingering_) {
    tls_->async_read_some(buffer_.prepare(kReadChunkBytes), std::move(on_read));
  } else {
    socket_.async_read_some(buffer_.prepare(kReadChunkBytes), std::move(on_read));
  }
}

void HttpConnection::OnRead(const error_code& error, size_t bytes) {
  reading_ = false;
  if (closed_) return;
  if (std::exchange(drain_read_cancelled_, false) && bytes == 0 &&
      (!error || error == asio::error::operation_aborted)) {
    StopReadingForDrain();  // it held nothing: the connection was idle
    return;
  }
  if (error) {
    OnReadError(error);
    return;
  }
  buffer_.commit(bytes);
  last_read_ns_ = options_.clock->NowNs();
  if (lingering_) {
    buffer_.consume(buffer_.size());
    ReadMore();
    return;
  }
  ProcessInput();
}

void HttpConnection::OnReadError(const error_code& error) {
  if (error == asio::error::operation_aborted) return;
  peer_gone_ = true;
  read_closed_ = true;
  // A TLS client that closes its socket without close_notify reads as a truncated stream.
  const bool eof = error == asio::error::eof || error == asio::ssl::error::stream_truncated;
  if (lingering_ || request_started_ || !eof) {
    Close();
    return;
  }
  // A clean EOF between requests: the client will send nothing more. Whatever it still waits
  // for is unlikely to be read (treat it as gone, as Go's net/http does), but answers already
  // produced are written in case it only half-closed.
  CancelUnanswered();
  if (slots_.empty()) Close();
}

void HttpConnection::ReadHead() {
  const Parser::value_type& message = parser_->get();
  request_ = HttpRequest();
  request_.method = std::string(AsStd(message.method_string()));
  request_.target = std::string(AsStd(message.target()));
  request_.version = static_cast<int>(message.version());
  request_.peer_names = peer_names_;
  size_t header_count = 0;
  size_t header_bytes = 0;
  for (const auto& field : message) {
    ++header_count;
    header_bytes += field.name_string().size() + field.value().size();
  }
  request_.headers.Reserve(header_count, header_bytes);
  for (const auto& field : message) {
    request_.headers.Add(AsStd(field.name_string()), AsStd(field.value()));
  }
}

bool HttpConnection::CheckHeadLimits() {
  const Parser::value_type& message = parser_->get();
  // "METHOD SP target SP HTTP/x.y"
  const size_t line_bytes = message.method_string().size() + message.target().size() + 10;
  if (line_bytes > options_.max_request_line_bytes) {
    Reject(414,
           StrCat("request line exceeds the limit of ", options_.max_request_line_bytes, " bytes"));
    return false;
  }
  size_t count = 0;
  for (auto it = message.begin(); it != message.end(); ++it) ++count;
  if (count > options_.max_header_count) {
    Reject(431, StrCat("request has ", count, " header fields, over the limit of ",
                       options_.max_header_count));
    return false;
  }
  return true;
}

HttpConnection::HeaderAction HttpConnection::OnHeader() {
  if (!CheckHeadLimits()) return HeaderAction::kWait;
  ReadHead();
  const Parser::value_type& message = parser_->get();
  if (parser_->chunked()) {
    // The body grows inside the parser (its reader writes through the message's body, set
    // here before any of it is parsed): it starts charged at zero bytes, and every growth is
    // charged before it is allocated.
    if (options_.memory_budget != nullptr) {
      parser_->get().body() =
          protocol::http::BodyBuffer::Allocate(0, 0, options_.memory_budget->TryCharge(0));
    }
    if (ExpectsContinue(message)) slots_.push_back(Slot::Interim());
    parser_->eager(true);
    MaybeWrite();
    return HeaderAction::kParseBody;
  }
  const boost::optional<std::uint64_t> length = parser_->content_length();
  if (!length || *length == 0) return HeaderAction::kParseBody;  // is_done() already
  // (A length over the limit was refused by the parser: http::error::body_limit.)
  const size_t aligned_offset =
      std::min<size_t>(state_->handler()->AlignedBodyOffset(request_), *length);
  MemoryBudget::Charge charge;
  if (options_.memory_budget != nullptr) {
    charge = options_.memory_budget->TryCharge(*length);
    if (!charge) {
      RejectOverBudget(*length);
      return HeaderAction::kWait;
    }
  }
  std::shared_ptr<protocol::http::BodyBuffer> body =
      protocol::http::BodyBuffer::Allocate(*length, aligned_offset, std::move(charge));
  if (body == nullptr) {
    Reject(503, "not enough memory for the request body");
    return HeaderAction::kWait;
  }
  // Take what the last read already brought, then read the rest straight into the body.
  const size_t buffered = std::min<size_t>(buffer_.size(), *length);
  asio::buffer_copy(asio::buffer(body->write_ptr(), buffered), buffer_.data());
  body->Commit(buffered);
  buffer_.consume(buffered);
  body_ = std::move(body);
  if (body_->size() == *length) return HeaderAction::kComplete;
  if (ExpectsContinue(message)) {
    slots_.push_back(Slot::Interim());
    MaybeWrite();
  }
  ReadBody();
  return HeaderAction::kWait;
}

void HttpConnection::ReadBody() {
  reading_ = true;
  reading_body_ = true;
  auto on_read = [self = shared_from_this()](const error_code& error, size_t bytes) {
    self->OnBodyRead(error, bytes);
  };
  const asio::mutable_buffer into(body_->write_ptr(), body_->available());
  if (tls_.has_value()) {
    asio::async_read(*tls_, into, std::move(on_read));
  } else {
    asio::async_read(socket_, into, std::move(on_read));
  }
}

void HttpConnection::OnBodyRead(const error_code& error, size_t bytes) {
  reading_ = false;
  reading_body_ = false;
  if (closed_) return;
  if (error) {
    if (error != asio::error::operation_aborted) {
      peer_gone_ = true;
      Close();  // the client left in the middle of its request
    }
    return;
  }
  if (read_closed_) {  // rejected (timeout) or draining meanwhile: the request is dropped
    body_.reset();
    return;
  }
  body_->Commit(bytes);
  last_read_ns_ = options_.clock->NowNs();
  Dispatch();
  ProcessInput();
}

void HttpConnection::Dispatch() {
  Parser::value_type& message = parser_->get();
  HttpRequest request = std::move(request_);
  if (body_ != nullptr) {
    request.body = std::move(body_);
  } else if (message.body() != nullptr) {
    request.body = std::move(message.body());
  } else {
    request.body = protocol::http::BodyBuffer::Empty();
  }
  request.arrival_ns = arrival_ns_;
  const bool keep_alive = parser_->keep_alive();
  parser_.reset();
  body_.reset();
  request_started_ = false;

  Slot slot;
  slot.id = next_id_++;
  slot.close_after = !keep_alive || draining_;
  slot.head_only = request.method == "HEAD";
  slot.http10_keep_alive = keep_alive && request.version == 10;
  slot.arrival_ns = arrival_ns_;
  if (slot.close_after) read_closed_ = true;
  const uint64_t id = slot.id;
  slots_.push_back(std::move(slot));
  if (slots_.size() >= static_cast<size_t>(options_.max_pipelined_requests)) paused_ = true;

  try {
    state_->handler()->Handle(std::move(request), HttpResponder(shared_from_this(), id));
  } catch (const std::exception&) {
    // The responder was destroyed during unwinding and answered 500; keep the connection.
  }
}

void HttpConnection::Reject(int status, std::string_view message, bool retry_later) {
  read_closed_ = true;
  parser_.reset();
  // A direct body read in flight still writes into body_: it is released when that read ends.
  if (!reading_body_) body_.reset();
  request_started_ = false;
  Slot slot;
  slot.id = next_id_++;
  slot.ready = true;
  slot.close_after = true;
  slot.arrival_ns = arrival_ns_;
  slot.response = state_->handler()->TransportError(status, message);
  if (retry_later) slot.response.headers.push_back({"Retry-After", "1"});
  slots_.push_back(std::move(slot));
  MaybeWrite();
}

void HttpConnection::RejectOverBudget(uint64_t body_bytes) {
  if (options_.memory_budget_refusals != nullptr) options_.memory_budget_refusals->Add();
  Reject(
      503,
      StrCat("the server is holding its limit of request memory (", options_.memory_budget->limit(),
             " bytes, --max-inflight-bytes) and cannot take this request's body of ", body_bytes,
             " bytes now; retry later"),
      /*retry_later=*/true);
}

void HttpConnection::RejectParseError(const error_code& error) {
  if (error == http::error::buffer_overflow) {
    // Only BodyBufferBody raises it: a chunked body that could not grow.
    const std::shared_ptr<protocol::http::BodyBuffer>& body = parser_->get().body();
    if (body != nullptr && body->budget_refused()) {
      RejectOverBudget(body->size());
    } else {
      Reject(503, "not enough memory for the request body");
    }
  } else if (error == http::error::body_limit) {
    Reject(413, StrCat("request body exceeds the limit of ", options_.max_body_bytes, " bytes"));
  } else if (error == http::error::header_limit) {
    Reject(431, StrCat("request head exceeds the limit of ", options_.max_header_bytes, " bytes"));
  } else {
    Reject(400, StrCat("malformed HTTP request: ", error.message()));
  }
}

// ------------------------------------------------------------------- answers and writing

void HttpConnection::Deliver(uint64_t request_id, HttpResponse response) {
  if (io_->RunningInThisThread()) {
    Complete(request_id, nullptr, &response);
    return;
  }
  io_->Post([self = shared_from_this(), request_id, response = std::move(response)]() mutable {
    self->Complete(request_id, nullptr, &response);
  });
}

void HttpConnection::DeliverFrom(uint64_t request_id, absl::AnyInvocable<HttpResponse()> make) {
  if (io_->RunningInThisThread()) {
    Complete(request_id, std::move(make), nullptr);
    return;
  }
  io_->Post([self = shared_from_this(), request_id, make = std::move(make)]() mutable {
    self->Complete(request_id, std::move(make), nullptr);
  });
}

void HttpConnection::SetCancelCallback(uint64_t request_id, absl::AnyInvocable<void()> on_cancel) {
  if (!io_->RunningInThisThread()) {
    io_->Post([self = shared_from_this(), request_id, on_cancel = std::move(on_cancel)]() mutable {
      self->SetCancelCallback(request_id, std::move(on_cancel));
    });
    return;
  }
  Slot* slot = FindSlot(request_id);
  if (slot != nullptr && !slot->ready && !peer_gone_ && !closed_) {
    slot->on_cancel = std::move(on_cancel);
  } else if (slot == nullptr ? closed_ : !slot->ready) {
    on_cancel();  // the client is already gone
  }
}

HttpConnection::Slot* HttpConnection::FindSlot(uint64_t request_id) {
  for (Slot& slot : slots_) {
    if (slot.id == request_id) return &slot;
  }
  return nullptr;
}

void HttpConnection::Complete(uint64_t request_id, absl::AnyInvocable<HttpResponse()> make,
                              HttpResponse* response) {
  Slot* slot = FindSlot(request_id);
  if (slot == nullptr || slot->ready) {
    // The connection closed first: nobody to answer. Skip the encoding work of `make`.
    if (response != nullptr && response->on_sent) response->on_sent(SentInfo{});
    return;
  }
  slot->response = response != nullptr ? std::move(*response) : make();
  slot->ready = true;
  slot->on_cancel = nullptr;
  MaybeWrite();
}

void HttpConnection::MaybeWrite() {
  if (writing_ || closed_) return;
  // The server began draining but this connection's BeginDrain has not run yet: apply it now so
  // the answer about to be written already says `Connection: close`.
  if (!draining_ && state_->draining()) {
    BeginDrain();
    if (closed_) return;
  }
  write_count_ = 0;
  for (const Slot& slot : slots_) {
    if (!slot.ready || write_count_ == kMaxAnswersPerWrite) break;
    ++write_count_;
    if (slot.close_after) break;
  }
  if (write_count_ == 0) return;
  // The heads' strings outlive each write, so their buffers are reused from answer to answer.
  if (write_heads_.size() < write_count_) write_heads_.resize(write_count_);
  write_buffers_.clear();
  for (size_t i = 0; i < write_count_; ++i) {
    const Slot& slot = slots_[i];
    if (slot.id == 0) {
      write_buffers_.emplace_back(kContinue.data(), kContinue.size());
      continue;
    }
    std::string& head = write_heads_[i];
    FormatHead(slot.response, slot.close_after, slot.http10_keep_alive, &head);
    write_buffers_.emplace_back(head.data(), head.size());
    if (slot.head_only) continue;
    if (!slot.response.body.empty()) {
      write_buffers_.emplace_back(slot.response.body.data(), slot.response.body.size());
    }
    for (const std::span<const std::byte>& part : slot.response.body_parts) {
      if (!part.empty()) write_buffers_.emplace_back(part.data(), part.size());
    }
  }
  writing_ = true;
  write_started_at_ = Clock::now();
  ArmWriteTimer();
  auto on_write = [self = shared_from_this()](const error_code& error, size_t) {
    self->OnWrite(error);
  };
  if (tls_.has_value()) {
    asio::async_write(*tls_, write_buffers_, std::move(on_write));
  } else {
    asio::async_write(socket_, write_buffers_, std::move(on_write));
  }
}

void HttpConnection::OnWrite(const error_code& error) {
  writing_ = false;
  if (closed_) return;
  const int64_t sent_ns = error ? 0 : options_.clock->NowNs();
  bool close = false;
  for (size_t i = 0; i < write_count_ && !slots_.empty(); ++i) {
    Slot slot = std::move(slots_.front());
    slots_.pop_front();
    close = close || slot.close_after;
    if (slot.id != 0 && slot.response.on_sent) {
      slot.response.on_sent(SentInfo{slot.arrival_ns, sent_ns, !error});
    }
  }
  write_count_ = 0;
  if (error) {
    peer_gone_ = true;
    Close();
    return;
  }
  if (close || (read_closed_ && slots_.empty())) {
    CloseAfterWrite();
    return;
  }
  if (slots_.empty() && !request_started_) idle_since_ = Clock::now();
  MaybeWrite();
  if (paused_ && slots_.size() < static_cast<size_t>(options_.max_pipelined_requests)) {
    paused_ = false;
    ProcessInput();
  }
  ArmReadTimer();
}

void HttpConnection::CancelUnanswered() {
  for (Slot& slot : slots_) {
    if (!slot.ready && slot.on_cancel) {
      absl::AnyInvocable<void()> on_cancel = std::move(slot.on_cancel);
      slot.on_cancel = nullptr;
      on_cancel();
    }
  }
}

void HttpConnection::CloseAfterWrite() {
  read_closed_ = true;
  if (peer_gone_) {
    Close();
    return;
  }
  // Lingering close: stop sending, then read and discard what the client still sends until it
  // closes (or the linger timeout), so it reads our last response rather than a reset.
  lingering_ = true;
  // A refused connection lingers only long enough for the request already on its way, so that
  // connections over the limit cannot pile up lingering.
  linger_until_ = Clock::now() + absl::ToChronoNanoseconds(
                                     refused_ ? std::min(options_.linger_timeout, kRefusedLinger)
                                              : options_.linger_timeout);
  buffer_.consume(buffer_.size());
  ArmReadTimer();
  if (tls_.has_value() && !reading_) {
    // TLS: send close_notify, then wait for the client's (or its FIN) until the linger deadline;
    // meanwhile OpenSSL discards any data the client still sends. (With a read in flight the
    // stream is busy: that read turns into the discarding one below, without close_notify.)
    reading_ = true;
    tls_->next_layer().async_shutdown([self = shared_from_this()](const error_code&) {
      self->reading_ = false;
      self->Close();
    });
    return;
  }
  error_code ignored;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
  if (!reading_) {
    ReadMore();
  } else if (reading_body_) {
    Close();  // a body read cannot be turned into a discarding read
  }
}

void HttpConnection::Close() {
  if (closed_) return;
  closed_ = true;
  read_closed_ = true;
  error_code ignored;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
  read_timer_.cancel();
  write_timer_.cancel();
  std::deque<Slot> slots = std::move(slots_);
  slots_.clear();
  parser_.reset();
  body_.reset();
  for (Slot& slot : slots) {
    if (!slot.ready && slot.on_cancel) slot.on_cancel();
    if (slot.ready && slot.id != 0 && slot.response.on_sent) {
      slot.response.on_sent(SentInfo{slot.arrival_ns, 0, false});
    }
  }
  state_->Unregister(this);
  if (reserved_) {
    reserved_ = false;
    state_->ReleaseConnection();
  }
}

// ------------------------------------------------------------------- timers

HttpConnection::TimePoint HttpConnection::ReadDeadline() const {
  if (closed_) return kNever;
  if (handshaking_) return handshake_until_;
  if (lingering_) return linger_until_;
  if (request_started_) {
    const TimePoint whole = request_started_at_ + absl::ToChronoNanoseconds(options_.read_timeout);
    if (header_seen_) return whole;
    return std::min(whole,
                    request_started_at_ + absl::ToChronoNanoseconds(options_.header_timeout));
  }
  if (slots_.empty() && !read_closed_) {
    return idle_since_ + absl::ToChronoNanoseconds(options_.idle_timeout);
  }
  return kNever;  // waiting for our own answers: the client is allowed to be quiet
}

void HttpConnection::ArmReadTimer() {
  const TimePoint deadline = ReadDeadline();
  if (deadline == kNever) return;  // an armed timer re-checks when it fires
  if (read_timer_armed_ && read_timer_at_ <= deadline) return;
  read_timer_armed_ = true;
  read_timer_at_ = deadline;
  read_timer_.expires_at(deadline);
  read_timer_.async_wait(
      [self = shared_from_this()](const error_code& error) { self->OnReadTimer(error); });
}

void HttpConnection::OnReadTimer(const error_code& error) {
  if (error == asio::error::operation_aborted) return;  // re-armed earlier, or closed
  read_timer_armed_ = false;
  if (closed_) return;
  const TimePoint deadline = ReadDeadline();
  if (deadline == kNever) return;
  if (deadline > Clock::now()) {
    ArmReadTimer();
    return;
  }
  if (handshaking_) {
    if (options_.tls_handshake_failures != nullptr) options_.tls_handshake_failures->Add();
    Close();  // too slow to handshake: nothing can be answered
    return;
  }
  if (request_started_ && !lingering_ && !header_seen_ &&
      options_.header_timeout < options_.read_timeout) {
    Reject(408, StrCat("request head not received within ",
                       absl::ToInt64Milliseconds(options_.header_timeout), " ms"));
  } else if (request_started_ && !lingering_) {
    Reject(408, StrCat("request not received within ",
                       absl::ToInt64Milliseconds(options_.read_timeout), " ms"));
  } else {
    Close();  // lingering after an answer, or idle between requests
  }
}

void HttpConnection::ArmWriteTimer() {
  if (write_timer_armed_) return;
  write_timer_armed_ = true;
  write_timer_.expires_at(write_started_at_ + absl::ToChronoNanoseconds(options_.write_timeout));
  write_timer_.async_wait(
      [self = shared_from_this()](const error_code& error) { self->OnWriteTimer(error); });
}

void HttpConnection::OnWriteTimer(const error_code& error) {
  write_timer_armed_ = false;
  if (error == asio::error::operation_aborted || closed_ || !writing_) return;
  if (write_started_at_ + absl::ToChronoNanoseconds(options_.write_timeout) > Clock::now()) {
    ArmWriteTimer();
    return;
  }
  Close();  // the client does not read its answers
}

}  // namespace brigade::frontend
