#ifndef BRIGADE_TELEMETRY_TRACE_CONTROL_H_
#define BRIGADE_TELEMETRY_TRACE_CONTROL_H_

// TraceControl: Triton's trace extension (GET/POST /v2[/models/{m}]/trace/setting, gRPC
// TraceSetting) mapped onto Brigade's tracer (tracer.h), changeable at run time, globally and per
// model. Each request's sampling asks it first (SamplingFor), so a change applies to the next
// request.
//
// The settings and what they mean here:
//   trace_level    ["TIMESTAMPS"]: requests are traced by the tracer's rules (a sampled parent,
//                  errors, SLO misses, the rate); ["OFF"]: none of the scope's requests is.
//                  "TENSORS" is refused: Brigade's spans carry stage timestamps, not tensors.
//   trace_rate     "N": one request in N on average is traced by the rate (the tracer draws
//                  1/N at random, where Triton takes every Nth); "0": only parents, errors and
//                  SLO misses (Brigade's --trace-rate 0).
//   trace_count    "-1": no limit; "N" >= 0: the scope traces N more requests, then stops (the
//                  answer shows what is left, as Triton's does).
//   log_frequency  "0" only: the exporter writes spans in batches as they come.
//   trace_file     the start-up --trace-file; read-only (a change is refused).
//   trace_mode     "opentelemetry" (Brigade's spans); "triton" is refused.
// A model's settings override the global ones key by key; a cleared key (no value) falls back
// to the global one, and a cleared global key to its start-up value. An unknown key, a value
// that is not one string (trace_level: one or more), or a number out of range is
// INVALID_ARGUMENT naming the key; a refused update changes nothing. Without a trace destination
// (no --trace-file nor OTLP endpoint) nothing can be traced: trace_level stays "OFF" and turning
// it on is FAILED_PRECONDITION.
//
// Thread safety: safe from any thread; SamplingFor takes a shared lock (one hash lookup when a
// model has its own settings). Failure: Update returns the error and changes nothing.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "protocol/trace_settings.h"
#include "telemetry/tracer.h"

namespace brigade::telemetry {

class TraceControl {
 public:
  struct Options {
    // The start-up sampling (--trace-rate); traced at all only with a destination.
    double sample_rate = 0.0;
    bool has_destination = false;
    std::string trace_file;
  };
  explicit TraceControl(Options options);

  // The settings that apply to `model` ("": the global ones).
  protocol::TraceSettings Get(std::string_view model) const;
  // The settings of `model` ("": global) after `update`; see the class comment.
  absl::StatusOr<protocol::TraceSettings> Update(std::string_view model,
                                                 const protocol::TraceSettingsUpdate& update);

  // How the tracer samples one request of `model`.
  Tracer::Sampling SamplingFor(std::string_view model) const;
  // A request of `model` was traced: counts it against the trace_count that applies.
  void Traced(std::string_view model);

 private:
  // One scope's settings; unset fields fall back (model → global → start-up).
  struct Scope {
    std::optional<bool> enabled;   // trace_level
    std::optional<uint64_t> rate;  // trace_rate: 1 in N, 0 = off
    std::optional<int64_t> count;  // trace_count: -1 = unlimited
  };
  struct Effective {
    bool enabled;
    uint64_t rate;
    int64_t count;
  };
  Effective Resolve(const Scope* model) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  protocol::TraceSettings Encode(const Effective& effective) const;

  const Options options_;
  const Scope startup_;
  mutable absl::Mutex mu_;
  Scope global_ ABSL_GUARDED_BY(mu_);
  // std::map: lookups by string_view (Debian's absl hashes only its own string_view).
  std::map<std::string, Scope, std::less<>> models_ ABSL_GUARDED_BY(mu_);
};

}  // namespace brigade::telemetry

#endif  // BRIGADE_TELEMETRY_TRACE_CONTROL_H_
