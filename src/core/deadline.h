#ifndef BRIGADE_CORE_DEADLINE_H_
#define BRIGADE_CORE_DEADLINE_H_

// Deadline: the monotonic instant (Clock::NowNs() scale) after which a request's answer is no
// longer wanted. Comes from the request's `timeout` parameter (microseconds), the gRPC deadline,
// or the model's queue policy; the earliest one wins. A value type; trivially copyable.

#include <algorithm>
#include <cstdint>
#include <limits>

#include "core/clock.h"

namespace brigade {

class Deadline {
 public:
  // No deadline.
  static constexpr Deadline Infinite() { return Deadline(std::numeric_limits<int64_t>::max()); }
  static constexpr Deadline AtNs(int64_t ns) { return Deadline(ns); }
  // `timeout_us` from `now_ns`; a non-positive timeout means "none" (the protocol's convention).
  static Deadline AfterUs(int64_t now_ns, int64_t timeout_us) {
    if (timeout_us <= 0) return Infinite();
    if (timeout_us > (std::numeric_limits<int64_t>::max() - now_ns) / 1000) return Infinite();
    return Deadline(now_ns + timeout_us * 1000);
  }

  constexpr Deadline() : Deadline(Infinite()) {}

  constexpr bool infinite() const { return ns_ == std::numeric_limits<int64_t>::max(); }
  constexpr int64_t ns() const { return ns_; }
  constexpr bool ExpiredAt(int64_t now_ns) const { return now_ns >= ns_; }
  // Nanoseconds left at `now_ns`; negative once expired; int64 max when infinite.
  constexpr int64_t RemainingNs(int64_t now_ns) const { return infinite() ? ns_ : ns_ - now_ns; }

  static constexpr Deadline Earliest(Deadline a, Deadline b) {
    return Deadline(std::min(a.ns_, b.ns_));
  }

  friend constexpr bool operator==(Deadline a, Deadline b) { return a.ns_ == b.ns_; }

 private:
  constexpr explicit Deadline(int64_t ns) : ns_(ns) {}
  int64_t ns_;
};

}  // namespace brigade

#endif  // BRIGADE_CORE_DEADLINE_H_
