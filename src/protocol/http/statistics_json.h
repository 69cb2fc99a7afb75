#ifndef BRIGADE_PROTOCOL_HTTP_STATISTICS_JSON_H_
#define BRIGADE_PROTOCOL_HTTP_STATISTICS_JSON_H_

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
// models without any.
//
// The server encodes it; the client decodes it, ignoring fields it does not know and reading
// uint64 counters sent as decimal strings too (INTERNAL naming the field when malformed; `json`
// must be followed by kJsonPaddingBytes readable bytes, json_dom_reader.h). Pure functions;
// thread-compatible.

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "protocol/statistics.h"

namespace simdjson::dom {
class parser;
}

namespace brigade::protocol::http {

std::string EncodeStatistics(std::span<const protocol::ModelStatistics> models);

// {"model_stats": [...]}.
absl::StatusOr<std::vector<protocol::ModelStatistics>> DecodeModelStatistics(
    simdjson::dom::parser& parser, std::string_view json);

}  // namespace brigade::protocol::http

#endif  // BRIGADE_PROTOCOL_HTTP_STATISTICS_JSON_H_
