#include "cache/circuit_breaker.h"

#include <algorithm>

namespace brigade::cache {

namespace {

CircuitBreaker::Options Clamped(CircuitBreaker::Options options) {
  options.failure_threshold = std::max(1, options.failure_threshold);
  options.open_duration_us = std::max<int64_t>(0, options.open_duration_us);
  options.first_open_duration_us =
      std::clamp<int64_t>(options.first_open_duration_us, 0, options.open_duration_us);
  return options;
}

}  // namespace

CircuitBreaker::CircuitBreaker(Options options, const Clock* clock)
    : options_(Clamped(options)), clock_(clock) {}

bool CircuitBreaker::Allow() {
  absl::MutexLock lock(&mu_);
  switch (state_) {
    case State::kClosed:
      return true;
    case State::kOpen:
      if (clock_->NowNs() - opened_at_ns_ < open_for_us_ * 1000) return false;
      state_ = State::kHalfOpen;
      probe_in_flight_ = true;
      return true;
    case State::kHalfOpen:
      if (probe_in_flight_) return false;
      probe_in_flight_ = true;
      return true;
  }
  return false;
}

void CircuitBreaker::RecordSuccess() {
  absl::MutexLock lock(&mu_);
  consecutive_failures_ = 0;
  if (state_ == State::kHalfOpen) {
    state_ = State::kClosed;
    probe_in_flight_ = false;
  }
}

void CircuitBreaker::RecordFailure() {
  absl::MutexLock lock(&mu_);
  switch (state_) {
    case State::kClosed:
      if (++consecutive_failures_ < options_.failure_threshold) return;
      open_for_us_ = options_.first_open_duration_us;
      break;
    case State::kHalfOpen:
      probe_in_flight_ = false;
      open_for_us_ = std::min(std::max<int64_t>(1, open_for_us_) * 2, options_.open_duration_us);
      break;
    case State::kOpen:
      return;  // a call allowed before the breaker opened; it is open already
  }
  state_ = State::kOpen;
  opened_at_ns_ = clock_->NowNs();
  consecutive_failures_ = 0;
  ++opens_;
}

CircuitBreaker::State CircuitBreaker::state() const {
  absl::MutexLock lock(&mu_);
  return state_;
}

uint64_t CircuitBreaker::opens() const {
  absl::MutexLock lock(&mu_);
  return opens_;
}

std::string_view BreakerStateName(CircuitBreaker::State state) {
  switch (state) {
    case CircuitBreaker::State::kClosed:
      return "closed";
    case CircuitBreaker::State::kOpen:
      return "open";
    case CircuitBreaker::State::kHalfOpen:
      return "half_open";
  }
  return "unknown";
}

}  // namespace brigade::cache
