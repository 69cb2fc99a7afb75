#include "cache/redis_connection.h"

#include <algorithm>
#include <utility>

#include "cache/hiredis_asio.h"
#include "core/strings.h"
#include "hiredis/async.h"
#include "hiredis/hiredis.h"

namespace brigade::cache {
namespace {

using SteadyClock = std::chrono::steady_clock;

RedisReply Convert(const redisReply& reply) {
  RedisReply out;
  switch (reply.type) {
    case REDIS_REPLY_STRING:
      out.type = RedisReply::Type::kString;
      out.str.assign(reply.str, reply.len);
      break;
    case REDIS_REPLY_STATUS:
      out.type = RedisReply::Type::kStatus;
      out.str.assign(reply.str, reply.len);
      break;
    case REDIS_REPLY_ERROR:
      out.type = RedisReply::Type::kError;
      out.str.assign(reply.str, reply.len);
      break;
    case REDIS_REPLY_INTEGER:
      out.type = RedisReply::Type::kInteger;
      out.integer = reply.integer;
      break;
    case REDIS_REPLY_ARRAY:
      out.type = RedisReply::Type::kArray;
      out.elements.reserve(reply.elements);
      for (size_t i = 0; i < reply.elements; ++i) {
        out.elements.push_back(Convert(*reply.element[i]));
      }
      break;
    default:
      out.type = RedisReply::Type::kNil;
      break;
  }
  return out;
}

}  // namespace

RedisConnection::RedisConnection(boost::asio::io_context& io, Options options, Hooks hooks)
    : io_(io),
      options_(std::move(options)),
      command_timeout_(absl::ToChronoNanoseconds(options_.command_timeout)),
      recycle_after_(absl::ToChronoNanoseconds(options_.recycle_after)),
      hooks_(std::move(hooks)),
      command_timer_(io),
      dial_timer_(io) {}

RedisConnection::~RedisConnection() = default;

void RedisConnection::Subscribe(std::string channel,
                                std::function<void(std::string_view)> on_message,
                                std::function<void()> on_subscribed) {
  channel_ = std::move(channel);
  on_message_ = std::move(on_message);
  on_subscribed_ = std::move(on_subscribed);
}

void RedisConnection::Start() {
  if (state_ == State::kIdle) Dial();
}

void RedisConnection::Dial() {
  if (state_ == State::kShutDown) return;
  const uint64_t generation = ++dial_generation_;
  redisAsyncContext* context = redisAsyncConnect(options_.host.c_str(), options_.port);
  if (context == nullptr || context->err != 0) {
    if (context != nullptr) redisAsyncFree(context);
    state_ = State::kIdle;
    ScheduleRedial();
    return;
  }
  context->data = this;
  redisAsyncSetConnectCallback(context, &RedisConnection::OnConnect);
  if (!AttachToAsio(io_, context, [this] { OnContextGone(); }).ok()) {
    redisAsyncFree(context);  // no adapter attached: frees without calling OnContextGone
    state_ = State::kIdle;
    ScheduleRedial();
    return;
  }
  context_ = context;
  state_ = State::kConnecting;
  dial_timer_.expires_after(absl::ToChronoNanoseconds(options_.connect_timeout));
  dial_timer_.async_wait([this, generation](const boost::system::error_code& ec) {
    if (ec || generation != dial_generation_ || state_ != State::kConnecting) return;
    redisAsyncFree(context_);  // connect took too long; OnContextGone schedules a redial
  });
}

void RedisConnection::OnConnect(const redisAsyncContext* context, int status) {
  auto* self = static_cast<RedisConnection*>(context->data);
  if (status != REDIS_OK) return;  // hiredis frees the context next; OnContextGone redials
  self->state_ = State::kReady;
  self->backoff_ = absl::ZeroDuration();
  self->dial_timer_.cancel();
  if (self->hooks_.on_ready) self->hooks_.on_ready();
  if (!self->channel_.empty()) {
    redisAsyncCommand(self->context_, &RedisConnection::OnSubscription, self, "SUBSCRIBE %b",
                      self->channel_.data(), self->channel_.size());
  }
}

void RedisConnection::OnContextGone() {
  // hiredis has answered every outstanding command (null replies) before calling this.
  context_ = nullptr;
  pending_.clear();
  timed_out_ = 0;
  const bool was_ready = state_ == State::kReady;
  if (state_ != State::kShutDown) {
    state_ = State::kIdle;
    ScheduleRedial();
  }
  if (was_ready && hooks_.on_lost) hooks_.on_lost();
}

void RedisConnection::ScheduleRedial() {
  backoff_ = backoff_ == absl::ZeroDuration() ? options_.reconnect_min
                                              : std::min(backoff_ * 2, options_.reconnect_max);
  const uint64_t generation = ++dial_generation_;
  dial_timer_.expires_after(absl::ToChronoNanoseconds(backoff_));
  dial_timer_.async_wait([this, generation](const boost::system::error_code& ec) {
    if (ec || generation != dial_generation_ || state_ != State::kIdle) return;
    Dial();
  });
}

void RedisConnection::Shutdown() {
  state_ = State::kShutDown;
  ++dial_generation_;
  dial_timer_.cancel();
  command_timer_.cancel();
  if (context_ != nullptr) redisAsyncFree(context_);  // answers outstanding commands
}

void RedisConnection::Send(const std::vector<std::string>& argv, RedisCallback done) {
  if (state_ != State::kReady || context_ == nullptr) {
    done(absl::UnavailableError("redis: not connected"));
    return;
  }
  if (pending_.size() >= options_.max_pending) {
    done(absl::UnavailableError(
        StrCat("redis: ", pending_.size(), " commands outstanding on the connection")));
    return;
  }
  std::vector<const char*> args;
  std::vector<size_t> lengths;
  args.reserve(argv.size());
  lengths.reserve(argv.size());
  for (const std::string& arg : argv) {
    args.push_back(arg.data());
    lengths.push_back(arg.size());
  }
  auto pending = std::make_unique<Pending>();
  pending->done = std::move(done);
  pending->sent = SteadyClock::now();
  pending->deadline = pending->sent + command_timeout_;
  Pending* raw = pending.get();
  pending_.push_back(std::move(pending));
  if (redisAsyncCommandArgv(context_, &RedisConnection::OnReply, raw, static_cast<int>(args.size()),
                            args.data(), lengths.data()) != REDIS_OK) {
    RedisCallback failed = std::move(raw->done);
    pending_.pop_back();
    failed(absl::UnavailableError("redis: connection is closing"));
    return;
  }
  ArmTimer();
}

void RedisConnection::OnReply(redisAsyncContext* context, void* reply, void* privdata) {
  auto* self = static_cast<RedisConnection*>(context->data);
  auto it = std::find_if(self->pending_.begin(), self->pending_.end(),
                         [privdata](const auto& p) { return p.get() == privdata; });
  if (it == self->pending_.end()) return;
  // Redis answers in order, so this is the front; find_if only guards the invariant.
  std::unique_ptr<Pending> pending = std::move(*it);
  const bool was_timed_out = pending->answered;
  self->pending_.erase(it);
  if (was_timed_out) {
    --self->timed_out_;
    return;
  }
  if (reply == nullptr) {
    pending->done(absl::UnavailableError("redis: connection lost before the reply"));
  } else {
    pending->done(Convert(*static_cast<const redisReply*>(reply)));
  }
}

void RedisConnection::OnSubscription(redisAsyncContext*, void* reply, void* privdata) {
  auto* self = static_cast<RedisConnection*>(privdata);
  if (reply == nullptr) return;  // the context is being freed
  const auto* r = static_cast<const redisReply*>(reply);
  if (r->type != REDIS_REPLY_ARRAY || r->elements < 3 ||
      r->element[0]->type != REDIS_REPLY_STRING) {
    return;
  }
  const std::string_view kind(r->element[0]->str, r->element[0]->len);
  if (kind == "message" && r->element[2]->type == REDIS_REPLY_STRING) {
    if (self->on_message_) self->on_message_({r->element[2]->str, r->element[2]->len});
  } else if (kind == "subscribe") {
    if (self->on_subscribed_) self->on_subscribed_();
  }
}

void RedisConnection::ArmTimer() {
  if (pending_.empty() || state_ == State::kShutDown) return;
  auto next = SteadyClock::time_point::max();
  if (timed_out_ < pending_.size()) next = pending_[timed_out_]->deadline;
  if (timed_out_ > 0) {
    next = std::min(next, pending_.front()->sent + recycle_after_);
  }
  if (command_timer_armed_ && command_timer_at_ <= next) return;
  // (Re)arm. Moving an armed timer cancels its wait; that handler sees an old generation.
  command_timer_armed_ = true;
  command_timer_at_ = next;
  const uint64_t generation = ++command_timer_generation_;
  command_timer_.expires_at(next);
  command_timer_.async_wait([this, generation](const boost::system::error_code& ec) {
    if (generation != command_timer_generation_) return;
    command_timer_armed_ = false;
    if (!ec) OnTimer();
  });
}

void RedisConnection::OnTimer() {
  const auto now = SteadyClock::now();
  std::vector<RedisCallback> expired;
  while (timed_out_ < pending_.size() && pending_[timed_out_]->deadline <= now) {
    Pending& pending = *pending_[timed_out_];
    pending.answered = true;
    expired.push_back(std::move(pending.done));
    ++timed_out_;
  }
  for (RedisCallback& done : expired) {
    done(absl::DeadlineExceededError(StrCat(
        "redis: no reply within ", absl::ToInt64Microseconds(options_.command_timeout), " us")));
  }
  if (timed_out_ > 0 && context_ != nullptr && now - pending_.front()->sent >= recycle_after_) {
    Drop();
    return;
  }
  ArmTimer();
}

void RedisConnection::Drop() {
  if (context_ != nullptr) redisAsyncFree(context_);  // OnContextGone redials
}

}  // namespace brigade::cache
