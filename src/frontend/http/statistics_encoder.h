#ifndef BRIGADE_FRONTEND_HTTP_STATISTICS_ENCODER_H_
#define BRIGADE_FRONTEND_HTTP_STATISTICS_ENCODER_H_

// The body of GET /v2/models[/{m}[/versions/{v}]]/stats, with Triton's field names:
//
//   {"model_stats":[{"name","version","last_inference","inference_count","execution_count",
//     "inference_stats":{"success","fail","queue","compute_input","compute_infer",
//                        "compute_output","cache_hit","cache_miss"},
//     "response_stats":{},
//     "batch_stats":[{"batch_size","compute_input","compute_infer","compute_output"}],
//     "memory_usage":[],
//     "brigade_stage_latency":[{"stage","count","p50_us","p90_us","p99_us"}]}]}
//
// where every duration is {"count":n,"ns":total}. Brigade keeps no per-response (decoupled)
// statistics or memory accounting, so those two are present and empty, as Triton sends them for
// models without any. Pure function; thread-compatible.

#include <span>
#include <string>

#include "protocol/statistics.h"

namespace brigade::frontend {

std::string EncodeStatistics(std::span<const protocol::ModelStatistics> models);

}  // namespace brigade::frontend

#endif  // BRIGADE_FRONTEND_HTTP_STATISTICS_ENCODER_H_
