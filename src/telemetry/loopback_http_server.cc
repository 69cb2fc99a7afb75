#include "telemetry/loopback_http_server.h"

#include <exception>
#include <thread>

#include "boost/asio/io_context.hpp"
#include "boost/asio/ip/tcp.hpp"
#include "boost/beast/core/flat_buffer.hpp"
#include "boost/beast/core/tcp_stream.hpp"
#include "boost/beast/http/read.hpp"
#include "boost/beast/http/string_body.hpp"
#include "boost/beast/http/write.hpp"
#include "core/http_tokens.h"
#include "core/strings.h"

namespace brigade::telemetry {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

// One connection: read a request, answer it, repeat while keep-alive.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, const LoopbackHttpServer::Handler* handler)
      : stream_(std::move(socket)), handler_(handler) {}

  void Read() {
    parser_.emplace();
    parser_->body_limit(uint64_t{64} << 20);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, size_t) {
                       if (!ec) self->Answer();
                     });
  }

 private:
  void Answer() {
    http::request<http::string_body> message = parser_->release();
    LoopbackHttpServer::Request request;
    request.method = std::string(message.method_string());
    request.target = std::string(message.target());
    for (const auto& field : message) {
      request.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
    }
    request.body = std::move(message.body());
    LoopbackHttpServer::Response answer;
    try {
      answer = (*handler_)(request);
    } catch (const std::exception& e) {
      answer = LoopbackHttpServer::Response();
      answer.status = 500;
      answer.body = e.what();
    }
    response_ = {static_cast<http::status>(answer.status), 11};
    response_.set(http::field::content_type, answer.content_type);
    for (const auto& [name, value] : answer.headers) response_.set(name, value);
    response_.body() = std::move(answer.body);
    response_.keep_alive(message.keep_alive());
    response_.prepare_payload();
    http::async_write(stream_, response_,
                      [self = shared_from_this()](beast::error_code ec, size_t) {
                        if (ec || !self->response_.keep_alive()) {
                          beast::error_code ignored;
                          self->stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
                          return;
                        }
                        self->Read();
                      });
  }

  beast::tcp_stream stream_;
  const LoopbackHttpServer::Handler* handler_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> response_;
};

}  // namespace

std::optional<std::string> LoopbackHttpServer::Request::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (EqualsIgnoreCase(key, name)) return value;
  }
  return std::nullopt;
}

class LoopbackHttpServer::Impl {
 public:
  explicit Impl(Handler handler) : handler_(std::move(handler)) {}

  ~Impl() {
    io_.stop();
    if (thread_.joinable()) thread_.join();
  }

  absl::Status Start(uint16_t port) {
    beast::error_code ec;
    const tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), port);
    acceptor_.open(endpoint.protocol(), ec);
    if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(endpoint, ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      return absl::UnavailableError(
          StrCat("loopback server: cannot listen on 127.0.0.1:", port, ": ", ec.message()));
    }
    port_ = acceptor_.local_endpoint().port();
    Accept();
    thread_ = std::thread([this] { io_.run(); });
    return absl::OkStatus();
  }

  uint16_t port() const { return port_; }

 private:
  void Accept() {
    acceptor_.async_accept([this](beast::error_code ec, tcp::socket socket) {
      if (ec) return;  // stopped
      std::make_shared<Session>(std::move(socket), &handler_)->Read();
      Accept();
    });
  }

  const Handler handler_;
  asio::io_context io_;
  tcp::acceptor acceptor_{io_};
  uint16_t port_ = 0;
  std::thread thread_;
};

absl::StatusOr<std::unique_ptr<LoopbackHttpServer>> LoopbackHttpServer::Start(Handler handler,
                                                                              uint16_t port) {
  auto impl = std::make_unique<Impl>(std::move(handler));
  try {
    if (absl::Status status = impl->Start(port); !status.ok()) return status;
  } catch (const std::exception& e) {
    return absl::UnavailableError(StrCat("loopback server: ", e.what()));
  }
  return std::make_unique<LoopbackHttpServer>(std::move(impl));
}

LoopbackHttpServer::LoopbackHttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LoopbackHttpServer::~LoopbackHttpServer() = default;
uint16_t LoopbackHttpServer::port() const { return impl_->port(); }

}  // namespace brigade::telemetry
