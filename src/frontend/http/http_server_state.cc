#include "frontend/http/http_server_state.h"

namespace brigade::frontend {

bool HttpServerState::ReserveConnection() {
  const int limit = options_.max_connections;
  const int before = reserved_connections_.fetch_add(1, std::memory_order_relaxed);
  if (limit > 0 && before >= limit) {
    reserved_connections_.fetch_sub(1, std::memory_order_relaxed);
    return false;
  }
  return true;
}

void HttpServerState::ReleaseConnection() {
  reserved_connections_.fetch_sub(1, std::memory_order_relaxed);
}

void HttpServerState::Register(const std::shared_ptr<HttpConnection>& connection) {
  absl::MutexLock lock(&mu_);
  connections_.emplace(connection.get(), connection);
}

void HttpServerState::Unregister(const HttpConnection* connection) {
  absl::MutexLock lock(&mu_);
  connections_.erase(connection);
}

std::vector<std::shared_ptr<HttpConnection>> HttpServerState::StartDraining() {
  {
    // Under the lock, so a connection registering after this sees the flag when it serves.
    absl::MutexLock lock(&mu_);
    draining_flag_.store(true, std::memory_order_release);
  }
  return OpenConnections();
}

std::vector<std::shared_ptr<HttpConnection>> HttpServerState::OpenConnections() {
  std::vector<std::shared_ptr<HttpConnection>> open;
  absl::MutexLock lock(&mu_);
  open.reserve(connections_.size());
  for (const auto& [key, weak] : connections_) {
    if (std::shared_ptr<HttpConnection> connection = weak.lock()) open.push_back(connection);
  }
  return open;
}

bool HttpServerState::WaitUntilNoConnections(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto none = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return connections_.empty(); };
  return mu_.AwaitWithTimeout(absl::Condition(&none), timeout);
}

size_t HttpServerState::open_connections() {
  absl::MutexLock lock(&mu_);
  return connections_.size();
}

}  // namespace brigade::frontend
