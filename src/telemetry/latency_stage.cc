#include "telemetry/latency_stage.h"

namespace brigade::telemetry {

std::string_view LatencyStageName(LatencyStage stage) {
  switch (stage) {
    case LatencyStage::kReceive:
      return "receive";
    case LatencyStage::kPreprocess:
      return "preprocess";
    case LatencyStage::kQueue:
      return "queue";
    case LatencyStage::kCompute:
      return "compute";
    case LatencyStage::kPostprocess:
      return "postprocess";
    case LatencyStage::kSend:
      return "send";
    case LatencyStage::kTotal:
      return "total";
  }
  return "unknown";
}

StageBounds LatencyStageBounds(LatencyStage stage) {
  switch (stage) {
    case LatencyStage::kReceive:
      return {Stage::kArrival, Stage::kDecoded};
    case LatencyStage::kPreprocess:
      return {Stage::kDecoded, Stage::kPreprocessed};
    case LatencyStage::kQueue:
      return {Stage::kQueueEnter, Stage::kQueueLeave};
    case LatencyStage::kCompute:
      return {Stage::kQueueLeave, Stage::kInferEnd};
    case LatencyStage::kPostprocess:
      return {Stage::kInferEnd, Stage::kPostprocessed};
    case LatencyStage::kSend:
      return {Stage::kPostprocessed, Stage::kSent};
    case LatencyStage::kTotal:
      return {Stage::kArrival, Stage::kSent};
  }
  return {Stage::kArrival, Stage::kSent};
}

std::optional<int64_t> LatencyStageNs(const StageClock& clock, LatencyStage stage) {
  const StageBounds bounds = LatencyStageBounds(stage);
  if (!clock.has(bounds.from) || !clock.has(bounds.to)) return std::nullopt;
  const int64_t from_ns = clock.at(bounds.from);
  const int64_t to_ns = clock.at(bounds.to);
  if (to_ns < from_ns) return std::nullopt;
  return to_ns - from_ns;
}

}  // namespace brigade::telemetry
