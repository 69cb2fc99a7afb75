#include "frontend/http/http_server.h"

#include <atomic>
#include <exception>
#include <optional>
#include <utility>  // before Asio: Boost 1.74 Asio misses it under C++20 with g++ 12
#include <vector>

#include "absl/synchronization/blocking_counter.h"
#include "absl/synchronization/notification.h"
#include "boost/asio/ip/address.hpp"
#include "boost/asio/ip/tcp.hpp"
#include "boost/asio/steady_timer.hpp"
#include "core/strings.h"
#include "frontend/http/http_connection.h"
#include "frontend/http/http_tls_context.h"
#include "frontend/http/io_thread.h"

namespace brigade::frontend {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;

// After a failed accept (out of descriptors), wait this long before trying again rather than spin.
constexpr auto kAcceptRetryDelay = std::chrono::milliseconds(50);
// How long Shutdown lets the 503 answers to cut requests be written before closing regardless.
constexpr absl::Duration kAbortWriteWait = absl::Milliseconds(200);
// How long Shutdown waits for forcibly closed connections to finish closing.
constexpr absl::Duration kForceCloseWait = absl::Seconds(5);

absl::Status ValidateOptions(const HttpServer::Options& options) {
  if (options.io_threads < 1) return absl::InvalidArgumentError("io_threads must be >= 1");
  if (options.port < 0 || options.port > 65535) {
    return absl::InvalidArgumentError(StrCat("port ", options.port, " is out of range"));
  }
  if (options.max_body_bytes == 0) return absl::InvalidArgumentError("max_body_bytes must be > 0");
  if (options.max_header_bytes < 256) {
    return absl::InvalidArgumentError("max_header_bytes must be >= 256");
  }
  if (options.max_header_count < 1) {
    return absl::InvalidArgumentError("max_header_count must be >= 1");
  }
  if (options.max_request_line_bytes < 16) {
    return absl::InvalidArgumentError("max_request_line_bytes must be >= 16");
  }
  if (options.max_pipelined_requests < 1) {
    return absl::InvalidArgumentError("max_pipelined_requests must be >= 1");
  }
  if (options.max_connections < 0) {
    return absl::InvalidArgumentError("max_connections must be >= 0 (0 = no limit)");
  }
  if (options.backlog < 1) return absl::InvalidArgumentError("backlog must be >= 1");
  const absl::Duration zero = absl::ZeroDuration();
  if (options.idle_timeout <= zero || options.read_timeout <= zero ||
      options.header_timeout <= zero || options.write_timeout <= zero ||
      options.linger_timeout < zero) {
    return absl::InvalidArgumentError("timeouts must be positive");
  }
  if (options.clock == nullptr) return absl::InvalidArgumentError("clock must not be null");
  return absl::OkStatus();
}

}  // namespace

class HttpServer::Impl {
 public:
  Impl(Options options, HttpHandler* handler)
      : state_(std::make_shared<HttpServerState>(std::move(options), handler)) {
    const int threads = state_->options().io_threads;
    for (int i = 0; i < threads; ++i) threads_.push_back(std::make_shared<IoThread>());
    acceptor_.emplace(threads_[0]->context());
    retry_timer_.emplace(threads_[0]->context());
  }

  ~Impl() { Shutdown(absl::ZeroDuration()); }

  absl::Status Listen() {
    const Options& options = state_->options();
    error_code error;
    const asio::ip::address address = asio::ip::make_address(options.address, error);
    if (error) {
      return absl::InvalidArgumentError(
          StrCat("cannot parse listen address '", options.address, "': ", error.message()));
    }
    const tcp::endpoint endpoint(address, static_cast<unsigned short>(options.port));
    const std::string where = StrCat(options.address, ":", options.port);
    if (acceptor_->open(endpoint.protocol(), error) ||
        acceptor_->set_option(asio::socket_base::reuse_address(true), error) ||
        acceptor_->bind(endpoint, error) || acceptor_->listen(options.backlog, error)) {
      return absl::UnavailableError(StrCat("cannot listen on ", where, ": ", error.message()));
    }
    port_ = acceptor_->local_endpoint(error).port();
    for (const std::shared_ptr<IoThread>& thread : threads_) thread->Start();
    started_ = true;
    threads_[0]->Post([this] { Accept(); });
    return absl::OkStatus();
  }

  int port() const { return port_; }
  size_t open_connections() const { return state_->open_connections(); }

  size_t Shutdown(absl::Duration drain_timeout) {
    if (shut_down_) return 0;
    shut_down_ = true;
    if (!started_) {  // Listen() failed: no loop ever ran
      for (const std::shared_ptr<IoThread>& thread : threads_) thread->Stop();
      return 0;
    }
    // 1. No new connections.
    absl::Notification stopped_accepting;
    if (!threads_[0]->Post([this, &stopped_accepting] {
          // Connections the kernel completed but nobody accepted yet may carry requests: take
          // them (they drain like the others) rather than reset them with the listener.
          error_code ignored;
          acceptor_->non_blocking(true, ignored);
          for (error_code error; !error;) {
            const std::shared_ptr<IoThread>& target = threads_[next_thread_++ % threads_.size()];
            tcp::socket socket(target->context());
            acceptor_->accept(socket, error);
            if (!error) Adopt(std::move(socket), target);
          }
          acceptor_->close(ignored);
          retry_timer_->cancel();
          stopped_accepting.Notify();
        })) {
      stopped_accepting.Notify();
    }
    stopped_accepting.WaitForNotification();
    // 2. Idle connections close now; busy ones after their last answer.
    for (const std::shared_ptr<HttpConnection>& connection : state_->StartDraining()) {
      connection->io()->Post([connection] { connection->BeginDrain(); });
    }
    // 3. Whatever is still unanswered when the drain time is up is answered 503 (its handlers
    // cancelled) and its connection closed once that is written, or at once if it cannot be.
    size_t cut = 0;
    if (!state_->WaitUntilNoConnections(drain_timeout)) {
      std::atomic<size_t> aborted{0};
      std::vector<std::shared_ptr<HttpConnection>> open = state_->OpenConnections();
      absl::BlockingCounter posted(static_cast<int>(open.size()));
      for (const std::shared_ptr<HttpConnection>& connection : open) {
        if (!connection->io()->Post([connection, &aborted, &posted] {
              aborted.fetch_add(connection->AbortUnanswered(), std::memory_order_relaxed);
              posted.DecrementCount();
            })) {
          posted.DecrementCount();
        }
      }
      posted.Wait();
      cut = aborted.load(std::memory_order_relaxed);
      if (!state_->WaitUntilNoConnections(kAbortWriteWait)) {
        for (const std::shared_ptr<HttpConnection>& connection : state_->OpenConnections()) {
          connection->io()->Post([connection] { connection->Close(); });
        }
        state_->WaitUntilNoConnections(kForceCloseWait);
      }
    }
    // 4. Stop the loops (running what was already queued).
    for (const std::shared_ptr<IoThread>& thread : threads_) thread->Stop();
    return cut;
  }

 private:
  // On threads_[0].
  void Accept() {
    const std::shared_ptr<IoThread>& target = threads_[next_thread_++ % threads_.size()];
    acceptor_->async_accept(target->context(),
                            [this, target](const error_code& error, tcp::socket socket) {
                              OnAccept(error, std::move(socket), target);
                            });
  }

  // On threads_[0].
  void OnAccept(const error_code& error, tcp::socket socket,
                const std::shared_ptr<IoThread>& target) {
    if (error == asio::error::operation_aborted) return;
    if (error) {
      if (!acceptor_->is_open()) return;
      retry_timer_->expires_after(kAcceptRetryDelay);
      retry_timer_->async_wait([this](const error_code& wait_error) {
        if (!wait_error) Accept();
      });
      return;
    }
    // Accepted before the listener closed, even if this runs after: it is served.
    Adopt(std::move(socket), target);
    if (acceptor_->is_open()) Accept();
  }

  // On threads_[0]: a connection for an accepted socket, started on `target` (or refused).
  void Adopt(tcp::socket socket, const std::shared_ptr<IoThread>& target) {
    error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    std::shared_ptr<HttpConnection> connection;
    try {
      connection = std::make_shared<HttpConnection>(
          std::move(socket), target, state_,
          state_->options().tls != nullptr ? state_->options().tls->Current() : nullptr);
    } catch (const std::exception&) {
      return;  // OpenSSL could not make a session (out of memory): the socket closes with it.
    }
    if (state_->ReserveConnection()) {
      // Registered here, not when it starts on its thread, so a drain that begins in between
      // counts it and waits for it.
      state_->Register(connection);
      if (!target->Post([connection] { connection->Start(); })) {
        state_->Unregister(connection.get());  // stopping: the connection never starts
        state_->ReleaseConnection();
      }
    } else {
      if (state_->options().refused_connections != nullptr) {
        state_->options().refused_connections->Add();
      }
      target->Post([connection] { connection->Refuse(); });
    }
  }

  // Declared first so they are destroyed last: the acceptor and connections are bound to them.
  std::vector<std::shared_ptr<IoThread>> threads_;
  std::shared_ptr<HttpServerState> state_;
  std::optional<tcp::acceptor> acceptor_;
  std::optional<asio::steady_timer> retry_timer_;
  size_t next_thread_ = 0;
  int port_ = 0;
  bool started_ = false;
  bool shut_down_ = false;
};

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Create(Options options,
                                                               HttpHandler* handler) {
  if (handler == nullptr) return absl::InvalidArgumentError("handler must not be null");
  if (absl::Status status = ValidateOptions(options); !status.ok()) return status;
  auto impl = std::make_unique<Impl>(std::move(options), handler);
  if (absl::Status status = impl->Listen(); !status.ok()) return status;
  return std::make_unique<HttpServer>(std::move(impl));
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() = default;

int HttpServer::port() const { return impl_->port(); }

size_t HttpServer::Shutdown(absl::Duration drain_timeout) { return impl_->Shutdown(drain_timeout); }

size_t HttpServer::open_connections() const { return impl_->open_connections(); }

}  // namespace brigade::frontend
