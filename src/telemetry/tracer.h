#ifndef BRIGADE_TELEMETRY_TRACER_H_
#define BRIGADE_TELEMETRY_TRACER_H_

// Tracer: turns a finished request's StageClock into OpenTelemetry spans and decides which
// requests are traced.
//
// Sampling is decided at the end of the request (Finish), when the outcome is known:
//   parent   the request carried a traceparent with the sampled flag (and follow_parent is on):
//            always traced, as Triton does for a propagated context;
//   error    the request failed (sample_errors);
//   slo      its total t0 → t5 exceeded slo_ns (slo_ns > 0);
//   rate     otherwise with probability sample_rate; a parent that says "not sampled" is
//            respected and only errors and SLO misses override it.
// An unsampled request costs a few branches and one random draw; nothing is allocated.
//
// Spans of a traced request (one trace; a new random trace id unless a parent gave one):
//   "infer"  SERVER, t0 → t5 (or the stamps it has), child of the caller's span; attributes
//            model_name, model_version, request_id (Triton's names), brigade.protocol,
//            brigade.batch_size, brigade.cache_hit, brigade.sample_reason; status ERROR with the
//            message on failure; events with Triton's names at each stamp (HTTP_RECV_START,
//            HTTP_RECV_END, PREPROCESS_END, QUEUE_START, COMPUTE_START, COMPUTE_INPUT_END,
//            COMPUTE_OUTPUT_START, COMPUTE_END, HTTP_SEND_END; GRPC_* for gRPC).
//   "receive", "preprocess", "queue", "compute", "postprocess", "send"
//            INTERNAL children, one per measurable stage (latency_stage.h).
//   "step"   INTERNAL children of an ensemble's root, one per step that answered, over the
//            step's own stamps, attributes model_name, model_version, brigade.step (the order
//            it finished in), brigade.step_name ("step 2 (switch 'by_group')"),
//            brigade.batch_size, brigade.cache_hit; each with its own stage children as above
//            (its queue and compute on the step model's scheduler). A switch or fusion step runs
//            no model (no model_name): its span covers its work, and a switch's carries
//            brigade.branch, the branch it took. Steps of branches not taken have none.
// Times: StageClock stamps are monotonic; they become wall-clock ns with one offset
// (wall − monotonic) taken at Create(), so a trace's spans keep their exact relative timing.
//
// Thread safety: Decide, BuildSpans and Finish are safe from any thread (const; per-thread
// random state). Ownership: `processor` and `options.clock` are borrowed and must outlive the
// tracer.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/clock.h"
#include "core/infer_request.h"
#include "core/infer_response.h"
#include "core/stage_clock.h"
#include "telemetry/span_data.h"
#include "telemetry/span_processor.h"
#include "telemetry/trace_context.h"

namespace brigade::telemetry {

enum class SampleReason : uint8_t { kNotSampled = 0, kParent, kError, kSlo, kRate };
std::string_view SampleReasonName(SampleReason reason);

// What the server knows about a finished request, besides its clock. Views are borrowed for the
// duration of the call.
struct RequestTraceInfo {
  std::string_view model{};
  std::string_view version{};
  std::string_view request_id{};
  Protocol protocol = Protocol::kHttp;
  absl::Status status{};
  int batch_size = 0;  // rows of the batch it ran in; 0 = did not execute (e.g. cache hit)
  bool cache_hit = false;
  std::span<const StepRecord> steps{};  // an ensemble's steps
};

// Finish's answer: whether the request was traced, and under which ids (for the access log or a
// response header).
struct TraceResult {
  SampleReason reason = SampleReason::kNotSampled;
  TraceId trace_id{};
  SpanId root_span_id{};
  bool submitted = false;  // false when sampled but dropped by a full export buffer

  bool sampled() const { return reason != SampleReason::kNotSampled; }
};

class Tracer {
 public:
  struct Options {
    // Probability that a request without a sampled parent is traced (Triton's trace_rate is
    // 1/this). 0 traces only parents, errors and SLO misses.
    double sample_rate = 0.0;
    bool sample_errors = true;
    // > 0: trace every request whose total exceeds this many ns.
    int64_t slo_ns = 0;
    bool follow_parent = true;
    // The time base of the StageClock stamps.
    const Clock* clock = Clock::Real();
    // Wall minus monotonic ns; unset: measured once at Create().
    std::optional<int64_t> wall_offset_ns{};
  };

  // What the trace settings (trace_control.h) decide for one request: whether its scope traces
  // at all (`enabled` false: nothing is, parents and errors included), and the rate. The
  // overloads without one use the options'.
  struct Sampling {
    bool enabled = true;
    double sample_rate = 0.0;
  };

  // INVALID_ARGUMENT for a rate outside [0, 1], a negative SLO, or a null processor or clock.
  static absl::StatusOr<std::unique_ptr<Tracer>> Create(Options options, SpanProcessor* processor);

  // The sampling decision for a finished request (see the class comment).
  SampleReason Decide(const std::optional<TraceContext>& parent, const absl::Status& status,
                      const StageClock& clock) const;
  SampleReason Decide(const std::optional<TraceContext>& parent, const absl::Status& status,
                      const StageClock& clock, const Sampling& sampling) const;

  // The spans of one request under `trace_id` (see the class comment); the first is the root.
  std::vector<SpanData> BuildSpans(const std::optional<TraceContext>& parent,
                                   const RequestTraceInfo& info, const StageClock& clock,
                                   SampleReason reason, const TraceId& trace_id) const;

  // Decide, then (when sampled) build the spans and submit them to the processor. Never blocks.
  TraceResult Finish(const std::optional<TraceContext>& parent, const RequestTraceInfo& info,
                     const StageClock& clock) const;
  TraceResult Finish(const std::optional<TraceContext>& parent, const RequestTraceInfo& info,
                     const StageClock& clock, const Sampling& sampling) const;

  // A monotonic stamp as wall-clock ns since the Unix epoch.
  int64_t ToWallNs(int64_t monotonic_ns) const { return monotonic_ns + wall_offset_ns_; }

  // Use Create().
  Tracer(Options options, SpanProcessor* processor, int64_t wall_offset_ns)
      : options_(options), processor_(processor), wall_offset_ns_(wall_offset_ns) {}

 private:
  const Options options_;
  SpanProcessor* const processor_;
  const int64_t wall_offset_ns_;
};

}  // namespace brigade::telemetry

#endif  // BRIGADE_TELEMETRY_TRACER_H_
