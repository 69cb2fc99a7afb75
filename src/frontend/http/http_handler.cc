#include "frontend/http/http_handler.h"

#include <string>
#include <utility>

#include "protocol/http/json_writer.h"

namespace brigade::frontend {

HttpResponder& HttpResponder::operator=(HttpResponder&& other) noexcept {
  if (this != &other) {
    if (channel_ != nullptr) Send(HttpResponse::Json(500, R"({"error":"request was dropped"})"));
    channel_ = std::move(other.channel_);
    request_id_ = other.request_id_;
  }
  return *this;
}

HttpResponder::~HttpResponder() {
  if (channel_ != nullptr) {
    Send(HttpResponse::Json(500, R"({"error":"request was dropped without an answer"})"));
  }
}

void HttpResponder::Send(HttpResponse response) {
  if (channel_ == nullptr) return;
  std::shared_ptr<ResponseChannel> channel = std::move(channel_);
  channel_ = nullptr;
  channel->Deliver(request_id_, std::move(response));
}

void HttpResponder::SendFrom(absl::AnyInvocable<HttpResponse()> make) {
  if (channel_ == nullptr) return;
  std::shared_ptr<ResponseChannel> channel = std::move(channel_);
  channel_ = nullptr;
  channel->DeliverFrom(request_id_, std::move(make));
}

void HttpResponder::OnCancel(absl::AnyInvocable<void()> on_cancel) {
  if (channel_ != nullptr) channel_->SetCancelCallback(request_id_, std::move(on_cancel));
}

size_t HttpHandler::AlignedBodyOffset(const HttpRequest&) { return 0; }

HttpResponse HttpHandler::TransportError(int status, std::string_view message) {
  std::string body;
  protocol::http::JsonWriter writer(&body);
  writer.BeginObject();
  writer.Key("error");
  writer.String(message);
  writer.EndObject();
  return HttpResponse::Json(status, std::move(body));
}

}  // namespace brigade::frontend
