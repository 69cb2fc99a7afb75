#include "telemetry/http_post_client.h"

#include <chrono>
#include <exception>

#include "boost/asio/connect.hpp"
#include "boost/asio/io_context.hpp"
#include "boost/asio/ip/tcp.hpp"
#include "boost/beast/core/flat_buffer.hpp"
#include "boost/beast/core/tcp_stream.hpp"
#include "boost/beast/http/read.hpp"
#include "boost/beast/http/string_body.hpp"
#include "boost/beast/http/write.hpp"
#include "core/strings.h"

namespace brigade::telemetry {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr uint64_t kMaxResponseBodyBytes = uint64_t{1} << 20;

}  // namespace

absl::StatusOr<HttpUrl> ParseHttpUrl(std::string_view url) {
  constexpr std::string_view kScheme = "http://";
  if (!url.starts_with(kScheme)) {
    return absl::InvalidArgumentError(
        StrCat("URL '", url, "': only http:// is supported (no TLS)"));
  }
  std::string_view rest = url.substr(kScheme.size());
  const size_t slash = rest.find('/');
  const std::string_view authority = rest.substr(0, slash);
  HttpUrl out;
  out.target = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
  std::string_view host = authority;
  std::string_view port;
  if (authority.starts_with('[')) {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) {
      return absl::InvalidArgumentError(StrCat("URL '", url, "': unterminated IPv6 address"));
    }
    host = authority.substr(1, close - 1);
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') return absl::InvalidArgumentError(StrCat("URL '", url, "': bad port"));
      port = after.substr(1);
    }
  } else if (const size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if (host.empty()) return absl::InvalidArgumentError(StrCat("URL '", url, "': no host"));
  out.host = std::string(host);
  if (!port.empty() && (!ParseInteger(port, &out.port) || out.port == 0)) {
    return absl::InvalidArgumentError(StrCat("URL '", url, "': bad port '", port, "'"));
  }
  return out;
}

class HttpPostClient::Impl {
 public:
  Impl(HttpUrl url, int64_t timeout_ms) : url_(std::move(url)), timeout_(timeout_ms) {}

  absl::StatusOr<Response> Post(std::string_view content_type, std::string body) {
    http::request<http::string_body> request{http::verb::post, url_.target, 11};
    request.set(http::field::host, url_.host);
    request.set(http::field::user_agent, "brigade");
    request.set(http::field::content_type,
                beast::string_view(content_type.data(), content_type.size()));
    request.keep_alive(true);
    request.body() = std::move(body);
    request.prepare_payload();
    const bool reused = connected_;
    absl::StatusOr<Response> response = Exchange(request);
    if (!response.ok() && reused && response.status().code() == absl::StatusCode::kUnavailable) {
      // The peer may have closed the idle keep-alive connection: one more try on a fresh one.
      response = Exchange(request);
    }
    return response;
  }

  const HttpUrl& url() const { return url_; }

 private:
  // Runs the asynchronous operation `start` begins to completion; its error code.
  template <typename Start>
  beast::error_code Run(Start start) {
    beast::error_code result;
    start([&result](beast::error_code ec, auto&&...) { result = ec; });
    io_.restart();
    io_.run();
    return result;
  }

  absl::Status Failure(std::string_view step, const beast::error_code& ec) {
    Close();
    const std::string message = StrCat("POST http://", url_.host, ":", url_.port, url_.target, ": ",
                                       step, ": ", ec.message());
    if (ec == beast::error::timeout) return absl::DeadlineExceededError(message);
    return absl::UnavailableError(message);
  }

  void Close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
    connected_ = false;
  }

  absl::Status Connect() {
    beast::error_code ec;
    tcp::resolver resolver(io_);
    const tcp::resolver::results_type endpoints =
        resolver.resolve(url_.host, std::to_string(url_.port), ec);
    if (ec) return Failure("resolve", ec);
    stream_.expires_after(timeout_);
    ec = Run([&](auto handler) { stream_.async_connect(endpoints, std::move(handler)); });
    if (ec) return Failure("connect", ec);
    stream_.socket().set_option(tcp::no_delay(true), ec);
    connected_ = true;
    return absl::OkStatus();
  }

  absl::StatusOr<Response> Exchange(http::request<http::string_body>& request) {
    if (!connected_) {
      if (absl::Status status = Connect(); !status.ok()) return status;
    }
    stream_.expires_after(timeout_);
    beast::error_code ec =
        Run([&](auto handler) { http::async_write(stream_, request, std::move(handler)); });
    if (ec) return Failure("write", ec);
    http::response_parser<http::string_body> parser;
    parser.body_limit(kMaxResponseBodyBytes);
    buffer_.clear();
    ec = Run([&](auto handler) { http::async_read(stream_, buffer_, parser, std::move(handler)); });
    if (ec) return Failure("read", ec);
    http::response<http::string_body> message = parser.release();
    Response response;
    response.status = static_cast<int>(message.result_int());
    response.body = std::move(message.body());
    if (const auto it = message.find(http::field::retry_after); it != message.end()) {
      response.retry_after = std::string(it->value());
    }
    if (!message.keep_alive()) Close();
    return response;
  }

  const HttpUrl url_;
  const std::chrono::milliseconds timeout_;
  asio::io_context io_;
  beast::tcp_stream stream_{io_};
  beast::flat_buffer buffer_;
  bool connected_ = false;
};

HttpPostClient::HttpPostClient(HttpUrl url, int64_t timeout_ms)
    : impl_(std::make_unique<Impl>(std::move(url), timeout_ms)) {}

HttpPostClient::~HttpPostClient() = default;

absl::StatusOr<HttpPostClient::Response> HttpPostClient::Post(std::string_view content_type,
                                                              std::string body) {
  try {
    return impl_->Post(content_type, std::move(body));
  } catch (const std::exception& e) {  // Beast/Asio throw on allocation and a few setup failures
    return absl::UnavailableError(StrCat("POST to ", impl_->url().host, ": ", e.what()));
  }
}

const HttpUrl& HttpPostClient::url() const { return impl_->url(); }

}  // namespace brigade::telemetry
