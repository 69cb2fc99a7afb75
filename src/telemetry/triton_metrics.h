#ifndef BRIGADE_TELEMETRY_TRITON_METRICS_H_
#define BRIGADE_TELEMETRY_TRITON_METRICS_H_

// Triton-compatible metric families, so dashboards and autoscaling rules
// written for Triton keep working against Brigade. Written from the statistics-extension
// snapshots at scrape time; nothing extra happens on the request path.
//
//   nv_inference_request_success                   counter  requests (cache hits included)
//   nv_inference_request_failure{reason}           counter  failed requests by Triton's reason:
//                                                           REJECTED, CANCELED, BACKEND, OTHER
//                                                           (failure_reason.h); all four series
//                                                           per model version, as Triton
//   nv_inference_count / nv_inference_exec_count   counter  rows executed / backend executions
//   nv_inference_request_duration_us               counter  cumulative t0 → answer of the
//                                                           successful requests, µs (as Triton)
//   nv_inference_queue_duration_us                 counter  cumulative queue time, µs
//   nv_inference_compute_{input,infer,output}_duration_us  counter  cumulative, µs
//   nv_cache_num_hits_per_model / _misses_per_model counter
//   nv_inference_pending_request_count             gauge    queue length (from RequestMetrics)
//
// Labels: model, version (and reason on failures). Triton's names break Prometheus conventions
// (no `_total`, µs), so `promtool check metrics` reports lint warnings for exactly these
// families; the brigade_* families are the conventional ones. A pure function; thread-safe.

#include <span>
#include <string>

#include "telemetry/model_stats.h"
#include "telemetry/request_metrics.h"

namespace brigade::telemetry {

// Appends the families for `models`. `request_metrics` (may be null) supplies the pending count;
// without it, or for a model version it has no handle for, that gauge is left out.
void AppendTritonMetrics(std::span<const protocol::ModelStatistics> models,
                         const RequestMetrics* request_metrics, std::string* out);

}  // namespace brigade::telemetry

#endif  // BRIGADE_TELEMETRY_TRITON_METRICS_H_
