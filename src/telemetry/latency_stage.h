#ifndef BRIGADE_TELEMETRY_LATENCY_STAGE_H_
#define BRIGADE_TELEMETRY_LATENCY_STAGE_H_

// LatencyStage: the named intervals of a request's life, cut from its StageClock stamps
// (core/stage_clock.h). Metrics histograms, trace spans, the access log and the dashboard all
// use these definitions, so their numbers agree.
//
//   receive      t0 arrival      → decoded         read the bytes and decode the request
//   preprocess   decoded         → t1 preprocessed route, validate, cache lookup, preprocessing
//   queue        queue enter     → queue leave     waiting for a batch and a free instance
//   compute      queue leave     → t3 infer end    batch assembly + backend execution
//   postprocess  t3 infer end    → t4 postprocessed slice outputs per request
//   send         t4 postprocessed → t5 sent        encode and write the response
//   total        t0 arrival      → t5 sent
//
// A stage is measured only when both of its stamps are set and in order, so a cache hit (no
// queue/compute/postprocess stamps) contributes receive, preprocess and total only.
// Pure functions; thread-safe.

#include <cstdint>
#include <optional>
#include <string_view>

#include "core/stage_clock.h"

namespace brigade::telemetry {

enum class LatencyStage : uint8_t {
  kReceive = 0,
  kPreprocess,
  kQueue,
  kCompute,
  kPostprocess,
  kSend,
  kTotal,
};
inline constexpr int kNumLatencyStages = 7;
// The six stages that tile t0 → t5 (everything but kTotal), in order.
inline constexpr int kNumPipelineStages = 6;

// "receive", "preprocess", "queue", "compute", "postprocess", "send", "total".
std::string_view LatencyStageName(LatencyStage stage);

// The stamps a stage runs between.
struct StageBounds {
  Stage from;
  Stage to;
};
StageBounds LatencyStageBounds(LatencyStage stage);

// The stage's duration in `clock`, or nullopt when a stamp is unset or they are out of order.
std::optional<int64_t> LatencyStageNs(const StageClock& clock, LatencyStage stage);

}  // namespace brigade::telemetry

#endif  // BRIGADE_TELEMETRY_LATENCY_STAGE_H_
