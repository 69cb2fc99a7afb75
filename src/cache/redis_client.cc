#include "cache/redis_client.h"

#include <atomic>
#include <thread>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "boost/asio/executor_work_guard.hpp"
#include "boost/asio/io_context.hpp"
#include "boost/asio/post.hpp"
#include "cache/redis_connection.h"
#include "core/strings.h"

namespace brigade::cache {

namespace asio = boost::asio;

class RedisClient::Impl {
 public:
  explicit Impl(Options options)
      : options_(std::move(options)),
        breaker_(options_.breaker, options_.clock),
        work_(asio::make_work_guard(io_)) {}

  ~Impl() { Close(); }

  void Close() {
    {
      absl::MutexLock lock(&close_mu_);
      if (closing_) return;
      closing_ = true;
    }
    asio::post(io_, [this] {
      for (auto& connection : connections_) connection->Shutdown();
      if (subscriber_ != nullptr) subscriber_->Shutdown();
    });
    work_.reset();
    // run() returns once every queued command, timer and socket wait has finished.
    if (thread_.joinable()) thread_.join();
  }

  void Start() {
    RedisConnection::Options connection_options;
    connection_options.host = options_.host;
    connection_options.port = options_.port;
    connection_options.command_timeout = options_.command_timeout;
    connection_options.connect_timeout = options_.connect_timeout;
    connection_options.reconnect_min = options_.reconnect_min;
    connection_options.reconnect_max = options_.reconnect_max;
    connection_options.max_pending = options_.max_pending_per_connection;
    connection_options.recycle_after = options_.recycle_after;
    RedisConnection::Hooks hooks;
    hooks.on_ready = [this] {
      connects_.fetch_add(1, std::memory_order_relaxed);
      absl::MutexLock lock(&ready_mu_);
      ++ready_connections_;
    };
    hooks.on_lost = [this] {
      disconnects_.fetch_add(1, std::memory_order_relaxed);
      absl::MutexLock lock(&ready_mu_);
      --ready_connections_;
    };
    for (int i = 0; i < options_.connections; ++i) {
      connections_.push_back(std::make_unique<RedisConnection>(io_, connection_options, hooks));
    }
    if (!options_.subscribe_channel.empty()) {
      RedisConnection::Hooks subscriber_hooks;
      subscriber_hooks.on_ready = [this] { connects_.fetch_add(1, std::memory_order_relaxed); };
      subscriber_hooks.on_lost = [this] {
        disconnects_.fetch_add(1, std::memory_order_relaxed);
        absl::MutexLock lock(&ready_mu_);
        subscribed_ = false;
      };
      subscriber_ = std::make_unique<RedisConnection>(io_, connection_options, subscriber_hooks);
      subscriber_->Subscribe(
          options_.subscribe_channel,
          [this](std::string_view message) {
            messages_.fetch_add(1, std::memory_order_relaxed);
            if (options_.on_message) options_.on_message(message);
          },
          [this] {
            // The owner's resync runs before WaitReady() can return, so nothing a waiter does
            // after it is undone by a late resync.
            if (options_.on_subscribed) options_.on_subscribed();
            absl::MutexLock lock(&ready_mu_);
            subscribed_ = true;
          });
    }
    thread_ = std::thread([this] { io_.run(); });
    asio::post(io_, [this] {
      for (auto& connection : connections_) connection->Start();
      if (subscriber_ != nullptr) subscriber_->Start();
    });
  }

  void Command(std::vector<std::string> argv, RedisCallback done) {
    absl::Status refused;
    {
      absl::ReaderMutexLock lock(&close_mu_);
      if (closing_) {
        refused = absl::UnavailableError("redis: client is shutting down");
      } else if (!breaker_.Allow()) {
        rejected_open_.fetch_add(1, std::memory_order_relaxed);
        refused = absl::UnavailableError("redis: circuit breaker is open");
      } else {
        commands_.fetch_add(1, std::memory_order_relaxed);
        asio::post(io_, [this, argv = std::move(argv), done = std::move(done)]() mutable {
          Dispatch(argv, std::move(done));
        });
        return;
      }
    }
    done(std::move(refused));
  }

  bool WaitReady(absl::Duration timeout) const {
    absl::MutexLock lock(&ready_mu_);
    const bool want_subscription = !options_.subscribe_channel.empty();
    auto ready = [this, want_subscription]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(ready_mu_) {
      return ready_connections_ == options_.connections && (!want_subscription || subscribed_);
    };
    return ready_mu_.AwaitWithTimeout(absl::Condition(&ready), timeout);
  }

  RedisClientStats Stats() const {
    RedisClientStats stats;
    stats.commands = commands_.load(std::memory_order_relaxed);
    stats.replies = replies_.load(std::memory_order_relaxed);
    stats.timeouts = timeouts_.load(std::memory_order_relaxed);
    stats.unavailable = unavailable_.load(std::memory_order_relaxed);
    stats.rejected_open = rejected_open_.load(std::memory_order_relaxed);
    stats.connects = connects_.load(std::memory_order_relaxed);
    stats.disconnects = disconnects_.load(std::memory_order_relaxed);
    stats.messages = messages_.load(std::memory_order_relaxed);
    {
      absl::MutexLock lock(&ready_mu_);
      stats.connections_ready = static_cast<uint64_t>(std::max(0, ready_connections_));
      stats.subscribed = subscribed_;
    }
    stats.breaker_state = breaker_.state();
    stats.breaker_opens = breaker_.opens();
    return stats;
  }

  const Options& options() const { return options_; }

 private:
  // On the I/O thread: the next ready connection with room, round-robin.
  RedisConnection* Pick() {
    for (size_t i = 0; i < connections_.size(); ++i) {
      RedisConnection* connection = connections_[next_++ % connections_.size()].get();
      if (connection->ready() && connection->outstanding() < options_.max_pending_per_connection) {
        return connection;
      }
    }
    return nullptr;
  }

  void Dispatch(const std::vector<std::string>& argv, RedisCallback done) {
    RedisConnection* connection = Pick();
    if (connection == nullptr) {
      breaker_.RecordFailure();
      unavailable_.fetch_add(1, std::memory_order_relaxed);
      done(absl::UnavailableError("redis: no connection is ready"));
      return;
    }
    connection->Send(argv, [this,
                            done = std::move(done)](absl::StatusOr<RedisReply> reply) mutable {
      if (reply.ok()) {
        breaker_.RecordSuccess();
        replies_.fetch_add(1, std::memory_order_relaxed);
      } else {
        breaker_.RecordFailure();
        (reply.status().code() == absl::StatusCode::kDeadlineExceeded ? timeouts_ : unavailable_)
            .fetch_add(1, std::memory_order_relaxed);
      }
      done(std::move(reply));
    });
  }

  const Options options_;
  CircuitBreaker breaker_;
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  std::thread thread_;
  // Touched only on the I/O thread once Start() has posted.
  std::vector<std::unique_ptr<RedisConnection>> connections_;
  std::unique_ptr<RedisConnection> subscriber_;
  size_t next_ = 0;

  absl::Mutex close_mu_;
  bool closing_ ABSL_GUARDED_BY(close_mu_) = false;

  mutable absl::Mutex ready_mu_;
  int ready_connections_ ABSL_GUARDED_BY(ready_mu_) = 0;
  bool subscribed_ ABSL_GUARDED_BY(ready_mu_) = false;

  std::atomic<uint64_t> commands_{0}, replies_{0}, timeouts_{0}, unavailable_{0}, rejected_open_{0},
      connects_{0}, disconnects_{0}, messages_{0};
};

absl::StatusOr<std::unique_ptr<RedisClient>> RedisClient::Create(Options options) {
  if (options.host.empty()) return absl::InvalidArgumentError("redis: host is empty");
  if (options.port <= 0 || options.port > 65535) {
    return absl::InvalidArgumentError(StrCat("redis: port ", options.port, " is out of range"));
  }
  if (options.connections < 1) {
    return absl::InvalidArgumentError("redis: connections must be at least 1");
  }
  const absl::Duration zero = absl::ZeroDuration();
  if (options.command_timeout <= zero || options.connect_timeout <= zero ||
      options.reconnect_min <= zero || options.reconnect_max < options.reconnect_min ||
      options.recycle_after < options.command_timeout) {
    return absl::InvalidArgumentError(
        "redis: timeouts must be positive, reconnect_max >= reconnect_min and "
        "recycle_after >= command_timeout");
  }
  if (options.max_pending_per_connection == 0) {
    return absl::InvalidArgumentError("redis: max_pending_per_connection must be at least 1");
  }
  if (options.clock == nullptr) return absl::InvalidArgumentError("redis: clock is null");
  auto impl = std::make_unique<Impl>(std::move(options));
  impl->Start();
  return std::make_unique<RedisClient>(ConstructionTag(), std::move(impl));
}

RedisClient::RedisClient(ConstructionTag, std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RedisClient::~RedisClient() { impl_->Close(); }

void RedisClient::Close() { impl_->Close(); }

void RedisClient::Command(std::vector<std::string> argv, RedisCallback done) {
  impl_->Command(std::move(argv), std::move(done));
}

bool RedisClient::WaitReady(absl::Duration timeout) const { return impl_->WaitReady(timeout); }
RedisClientStats RedisClient::Stats() const { return impl_->Stats(); }
const RedisClient::Options& RedisClient::options() const { return impl_->options(); }

}  // namespace brigade::cache
