#include "net/test_client.h"

#include <utility>

#include "core/strings.h"
#include "net/http_response_parser.h"

namespace brigade::net::testing {

std::string ClientResponse::header(const std::string& name) const {
  auto it = headers.find(name);
  return it == headers.end() ? "" : it->second;
}

TestClient::TestClient(int port) {
  absl::StatusOr<std::unique_ptr<HttpConnection>> connection =
      HttpConnection::Create({.host = "127.0.0.1", .port = port, .timeout_ms = kWaitMs});
  if (!connection.ok()) return;
  connection_ = *std::move(connection);
  connected_ = connection_->Open().ok();
}

void TestClient::Send(std::string_view bytes) {
  if (connected_) connection_->SendRaw(bytes).IgnoreError();
}

std::optional<ClientResponse> TestClient::Read(int timeout_ms) {
  if (!connected_) return std::nullopt;
  absl::StatusOr<HttpResponse> response = connection_->ReadResponse(&buffer_, timeout_ms);
  if (!response.ok()) return std::nullopt;
  ClientResponse out;
  out.status = response->head.status;
  const std::string_view bytes = buffer_.view();
  ForEachHttpHeader(bytes.substr(0, response->head.head_bytes),
                    [&out](std::string_view name, std::string_view value) {
                      std::string lower(name);
                      for (char& c : lower) {
                        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
                      }
                      out.headers[lower] = std::string(value);
                    });
  out.body = std::string(bytes.substr(response->body_offset, response->body_bytes));
  return out;
}

bool TestClient::WaitForClose(int timeout_ms) {
  return connected_ && connection_->WaitForClose(timeout_ms);
}

void TestClient::Close() {
  if (connection_ != nullptr) connection_->Close();
}

std::string GetRequest(std::string_view target, std::string_view extra_headers) {
  return StrCat("GET ", target, " HTTP/1.1\r\nHost: t\r\n", extra_headers, "\r\n");
}

std::string PostRequest(std::string_view target, std::string_view body,
                        std::string_view extra_headers) {
  return StrCat("POST ", target, " HTTP/1.1\r\nHost: t\r\nContent-Length: ", body.size(), "\r\n",
                extra_headers, "\r\n", body);
}

}  // namespace brigade::net::testing
