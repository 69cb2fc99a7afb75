#ifndef BRIGADE_FRONTEND_HTTP_HTTP_HANDLER_H_
#define BRIGADE_FRONTEND_HTTP_HTTP_HANDLER_H_

// HttpHandler: what the HTTP transport calls for each request; HttpResponder: how the handler
// answers, now or later, from any thread.
//
// Contract (TF Serving's net_http model): Handle() runs on one of the transport's io threads and
// must not block; it answers through the responder exactly once, either before returning or later
// from any thread (an inference callback). Responses to one connection are written in request
// order whatever order they are produced in.
//
// Cancellation: inside Handle() the handler may register a callback with OnCancel(); the
// transport calls it (on its io thread; keep it cheap, e.g. set a CancelFlag) if the connection
// dies before the response is written — client disconnect, timeout or forced shutdown — so queued
// work can be dropped.
//
// Ownership: the responder keeps the connection's state alive, not the socket; answering after
// the client left or the server stopped is safe and simply discarded. A responder destroyed
// without answering sends 500, so a client is never left hanging.

#include <cstdint>
#include <memory>
#include <string_view>

#include "absl/functional/any_invocable.h"
#include "frontend/http/http_message.h"

namespace brigade::frontend {

// The transport side of a responder (implemented by the connection; by fakes in tests).
class ResponseChannel {
 public:
  virtual ~ResponseChannel() = default;
  // Both may be called from any thread, once per request id.
  virtual void Deliver(uint64_t request_id, HttpResponse response) = 0;
  virtual void DeliverFrom(uint64_t request_id, absl::AnyInvocable<HttpResponse()> make) = 0;
  virtual void SetCancelCallback(uint64_t request_id, absl::AnyInvocable<void()> on_cancel) = 0;
};

class HttpResponder {
 public:
  HttpResponder(std::shared_ptr<ResponseChannel> channel, uint64_t request_id)
      : channel_(std::move(channel)), request_id_(request_id) {}
  HttpResponder(HttpResponder&&) = default;
  HttpResponder& operator=(HttpResponder&& other) noexcept;
  HttpResponder(const HttpResponder&) = delete;
  HttpResponder& operator=(const HttpResponder&) = delete;
  ~HttpResponder();

  // Answers the request. Later calls are ignored.
  void Send(HttpResponse response);
  // Answers with a response built by `make` on the connection's io thread, right before it is
  // queued for writing (lets a completion callback hand the encoding work to the io thread).
  void SendFrom(absl::AnyInvocable<HttpResponse()> make);
  // See the class comment. Call only from inside Handle().
  void OnCancel(absl::AnyInvocable<void()> on_cancel);

  bool answered() const { return channel_ == nullptr; }

 private:
  std::shared_ptr<ResponseChannel> channel_;
  uint64_t request_id_;
};

class HttpHandler {
 public:
  virtual ~HttpHandler() = default;

  // See the file comment. `request` is the handler's to keep.
  virtual void Handle(HttpRequest request, HttpResponder responder) = 0;

  // Called with the request's head (method, target, version, headers; no body yet) before its
  // body is read: the byte of the body that should be BodyBuffer::kAlignment-aligned, e.g. where
  // binary tensors start. Default 0. Must be cheap; runs on the io thread.
  virtual size_t AlignedBodyOffset(const HttpRequest& head);

  // The response the transport sends for errors it detects itself (malformed HTTP, body too
  // large, timeouts): by default {"error":"<message>"} as JSON.
  virtual HttpResponse TransportError(int status, std::string_view message);
};

}  // namespace brigade::frontend

#endif  // BRIGADE_FRONTEND_HTTP_HTTP_HANDLER_H_
