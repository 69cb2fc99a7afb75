#include "frontend/auth/access_gate.h"

#include <utility>

#include "spdlog/spdlog.h"

namespace brigade::frontend::auth {
namespace {

constexpr int64_t kLogIntervalNs = 1'000'000'000;

}  // namespace

absl::StatusOr<std::unique_ptr<AccessGate>> AccessGate::Create(Options options) {
  auto gate = std::make_unique<AccessGate>(std::move(options));
  if (gate->options_.registry != nullptr) {
    absl::StatusOr<telemetry::CounterFamily*> family = gate->options_.registry->AddCounter(
        "brigade_auth_refusals_total",
        "Requests refused by authentication or authorization, by protocol and reason.",
        {"protocol", "reason"});
    if (!family.ok()) return family.status();
    for (int protocol = 0; protocol < 2; ++protocol) {
      for (int reason = 1; reason < kRefusalCount; ++reason) {
        absl::StatusOr<telemetry::Counter*> counter = (*family)->WithLabels(
            {protocol == 0 ? "http" : "grpc", RefusalName(static_cast<Refusal>(reason))});
        if (!counter.ok()) return counter.status();
        gate->counters_[protocol][reason] = *counter;
      }
    }
  }
  return gate;
}

Decision AccessGate::Check(const RequestFacts& facts) const {
  std::shared_ptr<const TokenSet> tokens;
  if (options_.tokens != nullptr) tokens = options_.tokens->Current();
  Decision decision = Decide(options_.policy, tokens.get(), facts);
  if (decision.ok()) return decision;
  if (telemetry::Counter* counter =
          counters_[facts.http ? 0 : 1][static_cast<size_t>(decision.refusal)]) {
    counter->Add();
  }
  Log(facts, decision);
  return decision;
}

uint64_t AccessGate::refusals(bool http, Refusal refusal) const {
  const telemetry::Counter* counter = counters_[http ? 0 : 1][static_cast<size_t>(refusal)];
  return counter == nullptr ? 0 : counter->Value();
}

void AccessGate::Log(const RequestFacts& facts, const Decision& decision) const {
  const int64_t now = options_.clock->NowNs();
  int64_t next = next_log_ns_.load(std::memory_order_relaxed);
  if (now < next || !next_log_ns_.compare_exchange_strong(next, now + kLogIntervalNs)) {
    unlogged_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const uint64_t unlogged = unlogged_.exchange(0, std::memory_order_relaxed);
  // The message names the header or scope wanted, never a presented secret.
  spdlog::warn("auth: refused {} {} ({}{}{}): {}{}", facts.http ? "HTTP" : "gRPC",
               OperationName(facts.operation), RefusalName(decision.refusal),
               decision.principal.empty() ? "" : ", token ", decision.principal, decision.message,
               unlogged == 0 ? std::string()
                             : fmt::format(" [{} more refusals since the last line]", unlogged));
}

}  // namespace brigade::frontend::auth
