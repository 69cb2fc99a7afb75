#ifndef BRIGADE_FRONTEND_HTTP_HTTP_MESSAGE_H_
#define BRIGADE_FRONTEND_HTTP_HTTP_MESSAGE_H_

// HttpRequest / HttpResponse: what the HTTP transport hands to a handler and takes back. Plain
// values with no Boost types, so handlers and their tests never see Beast or Asio.
//
// Bodies are zero-copy in both directions: a request body is a shared BodyBuffer the handler may
// keep (binary tensors borrow it), and a response may append borrowed byte ranges after its
// string body (binary output tensors), kept alive by `body_owner` until they are written.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/functional/any_invocable.h"
#include "protocol/http/body_buffer.h"

namespace brigade::frontend {

struct HttpHeader {
  std::string name;
  std::string value;
};

// Request headers in one buffer: names and values are appended to one string and found by offset,
// so a request with ten headers costs two allocations instead of twenty.
class HttpHeaderList {
 public:
  void Reserve(size_t count, size_t text_bytes);
  void Add(std::string_view name, std::string_view value);
  // The first header called `name` (case-insensitive), or nullopt.
  std::optional<std::string_view> Find(std::string_view name) const;
  size_t size() const { return entries_.size(); }
  std::string_view name(size_t i) const;
  std::string_view value(size_t i) const;

 private:
  struct Entry {
    uint32_t name_offset, name_size, value_offset, value_size;
  };
  std::string text_;
  std::vector<Entry> entries_;
};

struct HttpRequest {
  std::string method;  // as sent, e.g. "GET"
  std::string target;  // as sent, e.g. "/v2/models/m/infer?x=1"
  int version = 11;    // 10 = HTTP/1.0, 11 = HTTP/1.1
  HttpHeaderList headers;
  // Never null: BodyBuffer::Empty() when the request has no body.
  std::shared_ptr<protocol::http::BodyBuffer> body;
  // t0: when the first byte of this request was read (Clock::NowNs scale).
  int64_t arrival_ns = 0;
  // The names of the client certificate its TLS connection verified; null without one.
  std::shared_ptr<const std::vector<std::string>> peer_names;

  // The first header called `name` (case-insensitive), or nullopt.
  std::optional<std::string_view> Header(std::string_view name) const;
  // The target without its query string.
  std::string_view path() const;
};

// Reported once per response, on the connection's thread, after its last byte was handed to the
// kernel (ok) or when it could not be (client gone, connection closed, server stopped).
struct SentInfo {
  int64_t arrival_ns = 0;  // t0 of the request
  int64_t sent_ns = 0;     // t5 (0 when !ok)
  bool ok = false;
};

struct HttpResponse {
  int status = 200;
  // Extra headers. Content-Length and Connection are always the transport's to write. Inline:
  // an answer's few headers cost no allocation of their own.
  absl::InlinedVector<HttpHeader, 4> headers;
  std::string body;
  // Sent after `body`, without a copy; `body_owner` keeps them alive until written.
  std::vector<std::span<const std::byte>> body_parts;
  std::shared_ptr<const void> body_owner;
  // Optional t5 hook; see SentInfo.
  absl::AnyInvocable<void(const SentInfo&)> on_sent;

  size_t content_length() const;
  // A response with Content-Type: application/json.
  static HttpResponse Json(int status, std::string body);
};

// "OK", "Not Found", ... for the status line; "Unknown" for codes this table does not list.
std::string_view ReasonPhrase(int status);

}  // namespace brigade::frontend

#endif  // BRIGADE_FRONTEND_HTTP_HTTP_MESSAGE_H_
