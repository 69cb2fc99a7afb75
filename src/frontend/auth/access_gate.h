#ifndef BRIGADE_FRONTEND_AUTH_ACCESS_GATE_H_
#define BRIGADE_FRONTEND_AUTH_ACCESS_GATE_H_

// AccessGate: what both front ends call on each request before decoding it. It runs the pure
// decision (access_policy.h) against the tokens currently in force, counts every refusal in
// `brigade_auth_refusals_total{protocol, reason}` and logs it, never with the token: at most one
// line a second, each saying how many refusals went unlogged since the one before (an attacker
// must not be able to fill the disk with log lines).
//
// Thread safety: Check() may be called from any thread concurrently; the gate is immutable after
// Create apart from atomics. Ownership: `tokens` and `registry` are borrowed and must outlive the
// gate. Failure: Create returns the registry's error if the counter family cannot be registered.

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "core/clock.h"
#include "frontend/auth/access_policy.h"
#include "frontend/auth/token_store.h"
#include "telemetry/counter.h"
#include "telemetry/metrics_registry.h"

namespace brigade::frontend::auth {

class AccessGate {
 public:
  struct Options {
    PolicyOptions policy;
    // The token file's tokens; null: no token file (tokens are not checked).
    const TokenStore* tokens = nullptr;
    // Where the refusal counter is registered; null: not counted (tests of the decision alone).
    telemetry::MetricsRegistry* registry = nullptr;
    const Clock* clock = Clock::Real();
  };

  static absl::StatusOr<std::unique_ptr<AccessGate>> Create(Options options);

  Decision Check(const RequestFacts& facts) const;

  // Whether a credential (a token file) is configured; without one the repository API is open
  // to whoever reaches the port.
  bool credentials_configured() const { return options_.tokens != nullptr; }
  // Refusals counted so far for (protocol, reason) (for tests).
  uint64_t refusals(bool http, Refusal refusal) const;

  explicit AccessGate(Options options) : options_(std::move(options)) {}

 private:
  void Log(const RequestFacts& facts, const Decision& decision) const;

  const Options options_;
  // [http ? 0 : 1][refusal]; null entries when there is no registry.
  std::array<std::array<telemetry::Counter*, kRefusalCount>, 2> counters_{};
  mutable std::atomic<int64_t> next_log_ns_{0};
  mutable std::atomic<uint64_t> unlogged_{0};
};

}  // namespace brigade::frontend::auth

#endif  // BRIGADE_FRONTEND_AUTH_ACCESS_GATE_H_
