#ifndef BRIGADE_TOOLS_ANALYZE_ANALYSIS_JSON_H_
#define BRIGADE_TOOLS_ANALYZE_ANALYSIS_JSON_H_

// analysis.json: everything an Analysis holds, for scripts, CI and the HTML report's data.
//
//   {"tool": "brigade analyze", "format": 1, "command": "...",
//    "settings": {metric, reference, eval{description, examples},
//                 load{description, rows_per_request, warmup_s, duration_s}, cores,
//                 load_average_start, other_cores_busy,
//                 slo{max_p99_ms, max_accuracy_drop, min_throughput_per_s, baseline_accuracy},
//                 goal},
//    "variants": [{name, model_dir, platform, base_max_batch_size, accuracy, examples, correct,
//                  eval_seconds, error}],
//    "configs":  [{id, variant, label, max_batch_size, batching, instances, threads,
//                  effective_threads, server_start_s, error, config_pbtxt}],
//    "skipped":  [{variant, label, reason}],
//    "points":   [{id, config, variant, label, load{mode, concurrency, rate},
//                  latency_ms{p50, p90, p99, mean}, throughput_per_s, ok, failed, accuracy,
//                  server{requests, queue_us, compute_input_us, compute_infer_us,
//                         compute_output_us, request_us, executions, mean_batch_size} | null,
//                  on_frontier, meets_slo, recommended, error}],
//    "frontier": [point ids],
//    "recommendation": {status, point, label, baseline_accuracy, feasible[], text, config_path,
//                       nearest[{point, label, p99_over_ms, accuracy_drop_over,
//                                throughput_under_per_s, distance, why}]}}
//
// Numbers that were not measured (NaN) and unbounded SLO terms (infinity) are null, so the file is
// strict JSON that any parser reads. Accuracy is a fraction; times in ms unless named _us / _s.
//
// Pure; thread-safe.

#include <string>

#include "tools/analyze/analysis.h"

namespace brigade::analyze {

std::string FormatAnalysisJson(const Analysis& analysis);

}  // namespace brigade::analyze

#endif  // BRIGADE_TOOLS_ANALYZE_ANALYSIS_JSON_H_
