#include "cache/redis_cache.h"

#include <algorithm>
#include <atomic>
#include <random>
#include <utility>
#include <vector>

#include "core/status_macros.h"
#include "core/strings.h"

namespace brigade::cache {
namespace {

using Outcome = RedisCache::GetResult::Outcome;

// Escapes Redis glob characters so a name matches only itself inside a MATCH pattern.
std::string GlobEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

uint64_t RandomOrigin() {
  std::random_device device;
  return (uint64_t{device()} << 32) ^ device();
}

}  // namespace

struct RedisCache::Counters {
  std::atomic<uint64_t> gets{0}, hits{0}, misses{0}, errors{0}, corrupt{0}, mismatched{0},
      expired{0}, sets{0}, set_errors{0}, set_too_large{0}, invalidations_sent{0},
      invalidation_errors{0}, invalidations_received{0}, malformed_messages{0}, keys_deleted{0},
      resyncs{0};
};

namespace {

void Bump(std::atomic<uint64_t>& counter, uint64_t n = 1) {
  counter.fetch_add(n, std::memory_order_relaxed);
}

// One invalidation in progress: SCAN → UNLINK → ... → PUBLISH, each step in the previous
// step's callback. Holds what it needs by value; the client outlives it (RedisCache closes its
// clients, which answers this chain, before they are destroyed).
struct InvalidationRun : std::enable_shared_from_this<InvalidationRun> {
  RedisClient* client = nullptr;
  std::string pattern;
  std::string channel;
  std::string message;
  std::string scan_count;
  std::shared_ptr<RedisCache::Counters> counters;
  RedisCache::DoneCallback done;

  void Finish(absl::Status status) {
    if (status.ok()) {
      Bump(counters->invalidations_sent);
    } else {
      Bump(counters->invalidation_errors);
    }
    if (done) done(std::move(status));
  }

  static absl::Status ReplyError(const absl::StatusOr<RedisReply>& reply, std::string_view step) {
    if (!reply.ok()) return reply.status();
    if (reply->type == RedisReply::Type::kError) {
      return absl::UnavailableError(StrCat("redis ", step, ": ", reply->str));
    }
    return absl::OkStatus();
  }

  void Scan(std::string cursor) {
    client->Command({"SCAN", std::move(cursor), "MATCH", pattern, "COUNT", scan_count},
                    [self = shared_from_this()](absl::StatusOr<RedisReply> reply) {
                      self->OnScan(std::move(reply));
                    });
  }

  void OnScan(absl::StatusOr<RedisReply> reply) {
    if (absl::Status error = ReplyError(reply, "SCAN"); !error.ok()) return Finish(error);
    if (reply->type != RedisReply::Type::kArray || reply->elements.size() != 2 ||
        reply->elements[1].type != RedisReply::Type::kArray) {
      return Finish(absl::UnavailableError("redis SCAN: unexpected reply shape"));
    }
    std::string next = std::move(reply->elements[0].str);
    std::vector<std::string> unlink = {"UNLINK"};
    for (RedisReply& key : reply->elements[1].elements) unlink.push_back(std::move(key.str));
    if (unlink.size() == 1) return Continue(std::move(next));
    client->Command(std::move(unlink), [self = shared_from_this(), next = std::move(next)](
                                           absl::StatusOr<RedisReply> reply) mutable {
      if (absl::Status error = ReplyError(reply, "UNLINK"); !error.ok()) {
        return self->Finish(error);
      }
      Bump(self->counters->keys_deleted,
           static_cast<uint64_t>(std::max<int64_t>(0, reply->integer)));
      self->Continue(std::move(next));
    });
  }

  void Continue(std::string next_cursor) {
    if (next_cursor != "0") return Scan(std::move(next_cursor));
    client->Command({"PUBLISH", channel, message},
                    [self = shared_from_this()](const absl::StatusOr<RedisReply>& reply) {
                      self->Finish(ReplyError(reply, "PUBLISH"));
                    });
  }
};

}  // namespace

// The build with Redis (BRIGADE_WITH_REDIS=ON); redis_tier_none.cc is the other side.
bool RedisTier::InBuild() { return true; }

absl::StatusOr<std::unique_ptr<RedisTier>> RedisTier::Create(Options options) {
  BRIGADE_ASSIGN_OR_RETURN(std::unique_ptr<RedisCache> cache,
                           RedisCache::Create(std::move(options)));
  return std::unique_ptr<RedisTier>(std::move(cache));
}

absl::StatusOr<std::unique_ptr<RedisCache>> RedisCache::Create(Options options) {
  if (options.key_prefix.empty()) {
    return absl::InvalidArgumentError("redis cache: empty key_prefix");
  }
  if (options.scan_count < 1) return absl::InvalidArgumentError("redis cache: scan_count < 1");
  if (options.wall_now_ns == nullptr) {
    return absl::InvalidArgumentError("redis cache: wall clock is null");
  }
  if (options.channel.empty()) options.channel = StrCat(options.key_prefix, ":invalidate");
  const uint64_t origin = RandomOrigin();
  auto counters = std::make_shared<Counters>();

  RedisClient::Options data;
  data.host = options.host;
  data.port = options.port;
  data.connections = options.connections;
  data.command_timeout = options.timeout;
  data.connect_timeout = options.connect_timeout;
  data.reconnect_min = options.reconnect_min;
  data.reconnect_max = options.reconnect_max;
  data.recycle_after = std::max(options.timeout, absl::Seconds(1));
  data.breaker = options.breaker;
  data.clock = options.clock;

  RedisClient::Options control = data;
  control.connections = 1;
  control.command_timeout = options.control_timeout;
  control.recycle_after = std::max(options.control_timeout, absl::Seconds(1));
  control.subscribe_channel = options.channel;
  control.on_message = [counters, origin,
                        handler = options.on_invalidation](std::string_view bytes) {
    absl::StatusOr<InvalidationMessage> message = DecodeInvalidation(bytes);
    if (!message.ok()) {
      Bump(counters->malformed_messages);
      return;
    }
    if (message->origin == origin) return;  // our own broadcast; applied locally already
    Bump(counters->invalidations_received);
    if (handler) handler(message->scope);
  };
  control.on_subscribed = [counters, handler = options.on_resync] {
    Bump(counters->resyncs);
    if (handler) handler();
  };

  auto cache = std::make_unique<RedisCache>(ConstructionTag(), std::move(options), origin,
                                            std::move(counters));
  BRIGADE_ASSIGN_OR_RETURN(cache->data_, RedisClient::Create(std::move(data)));
  BRIGADE_ASSIGN_OR_RETURN(cache->control_, RedisClient::Create(std::move(control)));
  return cache;
}

RedisCache::RedisCache(ConstructionTag, Options options, uint64_t origin,
                       std::shared_ptr<Counters> counters)
    : options_(std::move(options)), origin_(origin), counters_(std::move(counters)) {}

RedisCache::~RedisCache() { Close(); }

void RedisCache::Close() {
  // Answer the last callbacks while both clients are still whole (see redis_client.h).
  if (control_ != nullptr) control_->Close();
  if (data_ != nullptr) data_->Close();
}

std::string RedisCache::KeyName(const CacheKey& key) const {
  return StrCat(options_.key_prefix, ":", key.model_name.size(), ":", key.model_name, ":",
                key.version, ":", key.id.Hex());
}

std::string RedisCache::MatchPattern(const InvalidationScope& scope) const {
  const std::string prefix = GlobEscape(options_.key_prefix);
  switch (scope.kind) {
    case InvalidationScope::Kind::kAll:
      return StrCat(prefix, ":*");
    case InvalidationScope::Kind::kModel:
      return StrCat(prefix, ":", scope.model.size(), ":", GlobEscape(scope.model), ":*");
    case InvalidationScope::Kind::kModelVersion:
      return StrCat(prefix, ":", scope.model.size(), ":", GlobEscape(scope.model), ":",
                    scope.version, ":*");
  }
  return StrCat(prefix, ":*");
}

void RedisCache::Get(std::shared_ptr<const CacheKey> key, GetCallback done) {
  Bump(counters_->gets);
  std::string name = KeyName(*key);  // before `key` moves into the callback
  data_->Command(
      {"GET", std::move(name)},
      [counters = counters_, wall_now_ns = options_.wall_now_ns, key = std::move(key),
       done = std::move(done)](absl::StatusOr<RedisReply> reply) mutable {
        GetResult result;
        if (!reply.ok() || reply->type == RedisReply::Type::kError) {
          Bump(counters->errors);
          result.outcome = Outcome::kError;
          result.error = reply.ok() ? absl::UnavailableError(StrCat("redis GET: ", reply->str))
                                    : reply.status();
          return done(std::move(result));
        }
        if (reply->type != RedisReply::Type::kString) {
          Bump(counters->misses);
          return done(std::move(result));  // kMiss
        }
        auto blob = std::make_shared<const std::string>(std::move(reply->str));
        absl::StatusOr<std::shared_ptr<const CachedEntry>> entry = DecodeCachedValue(blob);
        if (!entry.ok()) {
          Bump(counters->corrupt);
          result.outcome = Outcome::kCorrupt;
          result.error = entry.status();
          return done(std::move(result));
        }
        if (!key->Matches((*entry)->id, (*entry)->check, (*entry)->descriptor)) {
          Bump(counters->mismatched);
          result.outcome = Outcome::kMismatch;
          return done(std::move(result));
        }
        if ((*entry)->expires_unix_ms > 0) {
          result.remaining_ttl_ms = (*entry)->expires_unix_ms - wall_now_ns() / 1'000'000;
          if (result.remaining_ttl_ms <= 0) {
            Bump(counters->expired);
            result.outcome = Outcome::kExpired;
            return done(std::move(result));
          }
        }
        Bump(counters->hits);
        result.outcome = Outcome::kHit;
        result.entry = *std::move(entry);
        done(std::move(result));
      });
}

void RedisCache::Set(const CacheKey& key, std::string value, int64_t ttl_ms, DoneCallback done) {
  if (value.size() > options_.max_value_bytes || ttl_ms <= 0) {
    Bump(counters_->set_too_large);
    if (done) {
      done(absl::InvalidArgumentError(StrCat("redis SET: value of ", value.size(), " bytes or ttl ",
                                             ttl_ms, " ms is out of bounds")));
    }
    return;
  }
  Bump(counters_->sets);
  data_->Command(
      {"SET", KeyName(key), std::move(value), "PX", std::to_string(ttl_ms)},
      [counters = counters_, done = std::move(done)](absl::StatusOr<RedisReply> reply) mutable {
        absl::Status status = reply.status();
        if (status.ok() && reply->type == RedisReply::Type::kError) {
          status = absl::UnavailableError(StrCat("redis SET: ", reply->str));
        }
        if (!status.ok()) Bump(counters->set_errors);
        if (done) done(std::move(status));
      });
}

void RedisCache::Invalidate(const InvalidationScope& scope, DoneCallback done) {
  auto run = std::make_shared<InvalidationRun>();
  run->client = control_.get();
  run->pattern = MatchPattern(scope);
  run->channel = options_.channel;
  run->message = EncodeInvalidation({scope, origin_});
  run->scan_count = std::to_string(options_.scan_count);
  run->counters = counters_;
  run->done = std::move(done);
  run->Scan("0");
}

bool RedisCache::WaitReady(absl::Duration timeout) const {
  const int64_t start_ns = Clock::Real()->NowNs();
  if (!data_->WaitReady(timeout)) return false;
  const absl::Duration left = timeout - absl::Nanoseconds(Clock::Real()->NowNs() - start_ns);
  return control_->WaitReady(std::max(left, absl::ZeroDuration()));
}

RedisTierStats RedisCache::Stats() const {
  RedisTierStats stats;
  const Counters& c = *counters_;
  auto read = [](const std::atomic<uint64_t>& counter) {
    return counter.load(std::memory_order_relaxed);
  };
  stats.gets = read(c.gets);
  stats.hits = read(c.hits);
  stats.misses = read(c.misses);
  stats.errors = read(c.errors);
  stats.corrupt = read(c.corrupt);
  stats.mismatched = read(c.mismatched);
  stats.expired = read(c.expired);
  stats.sets = read(c.sets);
  stats.set_errors = read(c.set_errors);
  stats.set_too_large = read(c.set_too_large);
  stats.invalidations_sent = read(c.invalidations_sent);
  stats.invalidation_errors = read(c.invalidation_errors);
  stats.invalidations_received = read(c.invalidations_received);
  stats.malformed_messages = read(c.malformed_messages);
  stats.keys_deleted = read(c.keys_deleted);
  stats.resyncs = read(c.resyncs);
  stats.data = data_->Stats();
  stats.control = control_->Stats();
  return stats;
}

std::string_view RedisOutcomeName(RedisCache::GetResult::Outcome outcome) {
  switch (outcome) {
    case Outcome::kHit:
      return "hit";
    case Outcome::kMiss:
      return "miss";
    case Outcome::kExpired:
      return "expired";
    case Outcome::kMismatch:
      return "mismatch";
    case Outcome::kCorrupt:
      return "corrupt";
    case Outcome::kError:
      return "error";
  }
  return "unknown";
}

}  // namespace brigade::cache
