#ifndef BRIGADE_TOOLS_SERVE_MEMORY_H_
#define BRIGADE_TOOLS_SERVE_MEMORY_H_

// The in-flight request memory budget of `brigade serve` (README "Security", core/memory_budget.h):
// its flag, the default it is sized from, and its metrics.
//
// `--max-inflight-bytes` is a byte count, `auto` (the default: a quarter of the memory this
// process may use, the tighter of physical memory and its cgroup's limit) or `none`.
//
// Thread safety: the flag and its parsing are the main thread's; ServeMemoryMetrics::Sample runs on
// the main thread while the counters it hands out are added to from any. Failure:
// InflightBudgetFromFlag returns INVALID_ARGUMENT naming the flag.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "CLI/App.hpp"
#include "absl/status/statusor.h"
#include "core/memory_budget.h"
#include "telemetry/counter.h"
#include "telemetry/metrics_registry.h"
#include "tools/doctor/host_files.h"

namespace brigade::tools {

// Registers --max-inflight-bytes on `serve` for `value` (borrowed; outlives `serve`).
void AddMemoryFlags(CLI::App* serve, std::string* value);

// The budget `value` asks for on `host` (doctor::HostFiles("") for this one); null for `none`.
// INVALID_ARGUMENT for anything but a positive byte count, `auto` or `none`, and for `auto` where
// the host's memory cannot be read.
absl::StatusOr<std::unique_ptr<MemoryBudget>> InflightBudgetFromFlag(std::string_view value,
                                                                     const doctor::HostFiles& host);

// brigade_inflight_request_bytes (the most held at once since the previous sample),
// brigade_inflight_request_limit_bytes and brigade_inflight_budget_refusals_total{protocol}.
class ServeMemoryMetrics {
 public:
  // `budget` and `registry` are borrowed and outlive the metrics.
  static absl::StatusOr<std::unique_ptr<ServeMemoryMetrics>> Create(
      MemoryBudget* budget, telemetry::MetricsRegistry* registry);

  // The refusal counter of `protocol` ("http" or "grpc").
  telemetry::Counter* refusals(std::string_view protocol) const;
  // Copies the budget's peak into the gauge; the serve loop calls it once a second.
  void Sample();

  ServeMemoryMetrics(MemoryBudget* budget, telemetry::Gauge* in_use, telemetry::Counter* http,
                     telemetry::Counter* grpc)
      : budget_(budget), in_use_(in_use), http_(http), grpc_(grpc) {}

 private:
  MemoryBudget* const budget_;
  telemetry::Gauge* const in_use_;
  telemetry::Counter* const http_;
  telemetry::Counter* const grpc_;
};

}  // namespace brigade::tools

#endif  // BRIGADE_TOOLS_SERVE_MEMORY_H_
