// HttpConnection's part in a server's shutdown: the drain (finish what the client sent before it
// could know, then close) and the deadline's abort (answer 503 what is still unanswered). The
// rest of the class is in http_connection.cc.
#include <algorithm>

#include "frontend/http/http_connection.h"

namespace brigade::frontend {

using boost::system::error_code;

void HttpConnection::BeginDrain() {
  if (closed_ || draining_) return;
  // A TLS 1.3 client sends its first request right behind its last handshake message: the
  // handshake (bounded by its timer) finishes first, and Serve comes back here.
  if (handshaking_) return;
  draining_ = true;
  if (read_closed_) return;  // the last request is known already
  // A request partly read, or whose bytes wait in the buffer or the socket, was sent before the
  // client could know: it is read and answered, and its answer (marked by Dispatch, which sees
  // draining_) is the last. Closing under it would lose it.
  const bool more_sent = request_started_ || InputPending();
  if (more_sent && !paused_) {
    ArmReadTimer();
    return;
  }
  const bool idle =
      std::none_of(slots_.begin(), slots_.end(), [](const Slot& slot) { return slot.id != 0; });
  if (!more_sent && idle && reading_ && !reading_body_ && !tls_.has_value()) {
    // Asio may already have moved the client's bytes off the socket into the read in flight,
    // where InputPending cannot see them: cancel it, and OnRead decides on what it brings. Not
    // while an answer is due: that answer must say it is the last as soon as it is written.
    // Not under TLS: the read in flight may be writing a TLS record of its own (a session
    // ticket, a key update), and a write cut in the middle would break the stream.
    drain_read_cancelled_ = true;
    error_code ignored;
    socket_.cancel(ignored);
    return;
  }
  StopReadingForDrain();
}

void HttpConnection::StopReadingForDrain() {
  read_closed_ = true;
  // The request last answered (or to be answered) is the last on this connection.
  for (auto it = slots_.rbegin(); it != slots_.rend(); ++it) {
    if (it->id != 0) {
      it->close_after = true;
      break;
    }
  }
  if (std::none_of(slots_.begin(), slots_.end(), [](const Slot& slot) { return slot.id != 0; })) {
    Close();  // idle: nothing to finish
  }
}

size_t HttpConnection::AbortUnanswered() {
  if (closed_) return 0;
  draining_ = true;
  read_closed_ = true;
  if (request_started_) {
    parser_.reset();
    if (!reading_body_) body_.reset();
    request_started_ = false;
  }
  size_t aborted = 0;
  Slot* last = nullptr;
  for (Slot& slot : slots_) {
    if (slot.id == 0) continue;
    last = &slot;
    if (slot.ready) continue;
    ++aborted;
    slot.response = state_->handler()->TransportError(
        503, "the server is shutting down and the request did not finish in time");
    slot.ready = true;
    if (slot.on_cancel) {
      absl::AnyInvocable<void()> on_cancel = std::move(slot.on_cancel);
      slot.on_cancel = nullptr;
      on_cancel();
    }
  }
  if (last == nullptr) {
    Close();
    return 0;
  }
  last->close_after = true;
  MaybeWrite();
  return aborted;
}

}  // namespace brigade::frontend
