#ifndef BRIGADE_FRONTEND_HTTP_HTTP_SERVER_STATE_H_
#define BRIGADE_FRONTEND_HTTP_HTTP_SERVER_STATE_H_

// HttpServerState: what the connections of one HttpServer share with it: the options, the
// handler, the count of connections against `max_connections`, and the set of open connections
// (so Shutdown can reach them and wait for them). Internal to the transport.
//
// Thread safety: every method may be called from any thread (the set is under a mutex; the
// reservation count and the draining flag are atomics).
// Ownership: shared by the server and its connections; `handler` is borrowed (see HttpServer).
// Connections are held weakly: the set never keeps one alive.

#include <atomic>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "frontend/http/http_handler.h"
#include "frontend/http/http_server.h"

namespace brigade::frontend {

class HttpConnection;

class HttpServerState {
 public:
  HttpServerState(HttpServer::Options options, HttpHandler* handler)
      : options_(std::move(options)), handler_(handler) {}

  const HttpServer::Options& options() const { return options_; }
  HttpHandler* handler() const { return handler_; }

  // Takes one of the `max_connections` places; false when they are all taken. Every true is
  // matched by one ReleaseConnection().
  bool ReserveConnection();
  void ReleaseConnection();
  // Also while draining: a connection accepted as the drain began may already carry a request,
  // which it reads and answers as its last (HttpConnection checks draining() when it serves).
  void Register(const std::shared_ptr<HttpConnection>& connection);
  void Unregister(const HttpConnection* connection);
  // Marks the server draining and returns the connections open now.
  std::vector<std::shared_ptr<HttpConnection>> StartDraining();
  std::vector<std::shared_ptr<HttpConnection>> OpenConnections();
  bool WaitUntilNoConnections(absl::Duration timeout);
  size_t open_connections();
  // True once StartDraining() ran; cheap enough to check on every write.
  bool draining() const { return draining_flag_.load(std::memory_order_acquire); }

 private:
  const HttpServer::Options options_;
  HttpHandler* const handler_;
  absl::Mutex mu_;
  std::atomic<bool> draining_flag_{false};
  std::atomic<int> reserved_connections_{0};
  absl::flat_hash_map<const HttpConnection*, std::weak_ptr<HttpConnection>> connections_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace brigade::frontend

#endif  // BRIGADE_FRONTEND_HTTP_HTTP_SERVER_STATE_H_
