#ifndef BRIGADE_CACHE_CIRCUIT_BREAKER_H_
#define BRIGADE_CACHE_CIRCUIT_BREAKER_H_

// CircuitBreaker: stops sending work to a dependency that keeps failing, and probes it now and
// then to notice when it is back. Used in front of Redis so that a slow or dead Redis costs each
// request one quick "no" instead of a timeout.
//
//   closed     every call is allowed; `failure_threshold` consecutive failures open the breaker.
//   open       no call is allowed until the open period has passed since it opened; then
//   half-open  exactly one call (the probe) is allowed at a time; its success closes the breaker,
//              its failure opens it again for twice the previous period.
//
// The open period starts at `first_open_duration_us` each time the breaker opens from closed and
// doubles with every failed probe up to `open_duration_us`. A dependency that is down is thus
// probed a few times in its first second and then every `open_duration_us`, while a brief stall
// (a burst of timeouts because the host was busy for a few ms: all commands in flight fail
// together) costs only `first_open_duration_us` of skipped calls, not a full period. Measured on
// the response cache's Zipf benchmark (bench/results/cache.md): two 500 ms openings after such
// stalls skipped ~11,000 Redis lookups.
//
// Protocol: every Allow() that returns true must be followed by exactly one RecordSuccess() or
// RecordFailure() for that call. A success in closed state resets the consecutive-failure count.
//
// Time: the injected Clock (tests step a FakeClock). Thread safety: all methods may be called
// from any thread (one small mutex; calls are nanoseconds).

#include <cstdint>
#include <string_view>

#include "absl/synchronization/mutex.h"
#include "core/clock.h"

namespace brigade::cache {

class CircuitBreaker {
 public:
  struct Options {
    int failure_threshold = 5;
    // The longest open period (reached by doubling after failed probes).
    int64_t open_duration_us = 500'000;
    // The first open period after closed; clamped to [0, open_duration_us].
    int64_t first_open_duration_us = 20'000;
  };
  enum class State { kClosed, kOpen, kHalfOpen };

  // `clock` is borrowed and must outlive the breaker.
  CircuitBreaker(Options options, const Clock* clock);

  // Whether a call may go ahead now (see the protocol above).
  bool Allow();
  void RecordSuccess();
  void RecordFailure();

  State state() const;
  // Times the breaker went from closed or half-open to open.
  uint64_t opens() const;

 private:
  const Options options_;
  const Clock* const clock_;
  mutable absl::Mutex mu_;
  State state_ ABSL_GUARDED_BY(mu_) = State::kClosed;
  int consecutive_failures_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t opened_at_ns_ ABSL_GUARDED_BY(mu_) = 0;
  // The current open period.
  int64_t open_for_us_ ABSL_GUARDED_BY(mu_) = 0;
  bool probe_in_flight_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t opens_ ABSL_GUARDED_BY(mu_) = 0;
};

std::string_view BreakerStateName(CircuitBreaker::State state);

}  // namespace brigade::cache

#endif  // BRIGADE_CACHE_CIRCUIT_BREAKER_H_
