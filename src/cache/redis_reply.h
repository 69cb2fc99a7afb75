#ifndef BRIGADE_CACHE_REDIS_REPLY_H_
#define BRIGADE_CACHE_REDIS_REPLY_H_

// RedisReply: a Redis (RESP2) reply copied out of hiredis, so it can outlive the hiredis
// callback that delivered it; and the callback type the Redis classes answer through.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"

namespace brigade::cache {

struct RedisReply {
  enum class Type { kNil, kString, kStatus, kError, kInteger, kArray };
  Type type = Type::kNil;
  std::string str;  // kString, kStatus, kError
  int64_t integer = 0;
  std::vector<RedisReply> elements;  // kArray
};

// Called exactly once per command: the reply (an error reply is still a reply), or
// DEADLINE_EXCEEDED (no reply within the command timeout) or UNAVAILABLE (no connection, queue
// full, circuit open, connection lost, client shutting down).
using RedisCallback = absl::AnyInvocable<void(absl::StatusOr<RedisReply>)>;

}  // namespace brigade::cache

#endif  // BRIGADE_CACHE_REDIS_REPLY_H_
