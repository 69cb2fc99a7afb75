#include "tools/serve_memory.h"

#include <utility>

#include "core/status_macros.h"
#include "core/strings.h"
#include "tools/doctor/memory_limit.h"

namespace brigade::tools {

void AddMemoryFlags(CLI::App* serve, std::string* value) {
  serve
      ->add_option("--max-inflight-bytes", *value,
                   "Request bodies and gRPC messages held at once, all connections together; "
                   "past it requests get 503 / UNAVAILABLE. A byte count, 'auto' (a quarter of "
                   "the memory this process may use) or 'none'")
      ->capture_default_str();
}

absl::StatusOr<std::unique_ptr<MemoryBudget>> InflightBudgetFromFlag(
    std::string_view value, const doctor::HostFiles& host) {
  if (value == "none") return nullptr;
  if (value == "auto") {
    const doctor::MemoryLimit limit = doctor::ReadMemoryLimit(host);
    const std::optional<uint64_t> usable = limit.usable_bytes();
    if (!usable.has_value()) {
      std::string why;
      for (const std::string& line : limit.evidence) why = StrCat(why, "; ", line);
      return absl::InvalidArgumentError(
          StrCat("--max-inflight-bytes=auto: this host's memory could not be read", why,
                 "; give a byte count or 'none'"));
    }
    // Requests share the process with the models' weights and arenas: a quarter leaves them
    // the rest.
    return std::make_unique<MemoryBudget>(static_cast<size_t>(*usable / 4));
  }
  int64_t bytes = 0;
  if (!ParseInteger(value, &bytes) || bytes <= 0) {
    return absl::InvalidArgumentError(StrCat("--max-inflight-bytes '", value,
                                             "' is neither a positive byte count, 'auto' nor "
                                             "'none'"));
  }
  return std::make_unique<MemoryBudget>(static_cast<size_t>(bytes));
}

absl::StatusOr<std::unique_ptr<ServeMemoryMetrics>> ServeMemoryMetrics::Create(
    MemoryBudget* budget, telemetry::MetricsRegistry* registry) {
  BRIGADE_ASSIGN_OR_RETURN(
      telemetry::GaugeFamily * in_use,
      registry->AddGauge("brigade_inflight_request_bytes",
                         "Most bytes of request bodies and gRPC messages held at once since the "
                         "previous sample (sampled once a second)",
                         {}));
  BRIGADE_ASSIGN_OR_RETURN(
      telemetry::GaugeFamily * limit,
      registry->AddGauge("brigade_inflight_request_limit_bytes",
                         "The in-flight request memory budget (--max-inflight-bytes)", {}));
  BRIGADE_ASSIGN_OR_RETURN(
      telemetry::CounterFamily * refusals,
      registry->AddCounter("brigade_inflight_budget_refusals_total",
                           "Requests answered 503 / UNAVAILABLE because the in-flight request "
                           "memory budget was held",
                           {"protocol"}));
  BRIGADE_ASSIGN_OR_RETURN(telemetry::Gauge * in_use_gauge, in_use->WithLabels({}));
  BRIGADE_ASSIGN_OR_RETURN(telemetry::Gauge * limit_gauge, limit->WithLabels({}));
  BRIGADE_ASSIGN_OR_RETURN(telemetry::Counter * http, refusals->WithLabels({"http"}));
  BRIGADE_ASSIGN_OR_RETURN(telemetry::Counter * grpc, refusals->WithLabels({"grpc"}));
  limit_gauge->Set(static_cast<int64_t>(budget->limit()));
  return std::make_unique<ServeMemoryMetrics>(budget, in_use_gauge, http, grpc);
}

telemetry::Counter* ServeMemoryMetrics::refusals(std::string_view protocol) const {
  return protocol == "grpc" ? grpc_ : http_;
}

void ServeMemoryMetrics::Sample() { in_use_->Set(static_cast<int64_t>(budget_->TakePeak())); }

}  // namespace brigade::tools
