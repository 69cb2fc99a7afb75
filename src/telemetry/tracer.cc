#include "telemetry/tracer.h"

#include <algorithm>
#include <array>

#include "core/strings.h"
#include "telemetry/fast_random.h"
#include "telemetry/latency_stage.h"

namespace brigade::telemetry {
namespace {

// OTLP Span.flags bits 8/9: whether the parent is known to be remote, and whether it is.
constexpr uint32_t kFlagHasIsRemote = 0x100;
constexpr uint32_t kFlagIsRemote = 0x200;

std::string_view ProtocolPrefix(Protocol protocol) {
  switch (protocol) {
    case Protocol::kHttp:
      return "HTTP";
    case Protocol::kGrpc:
      return "GRPC";
    case Protocol::kInProcess:
      return "INPROCESS";
  }
  return "INPROCESS";
}

struct StampEvent {
  Stage stage;
  std::string_view name;  // empty: protocol-prefixed, see below
  std::string_view suffix;
};

constexpr std::array<StampEvent, kNumStages> kStampEvents = {{
    {Stage::kArrival, "", "_RECV_START"},
    {Stage::kDecoded, "", "_RECV_END"},
    {Stage::kPreprocessed, "PREPROCESS_END", ""},
    {Stage::kQueueEnter, "QUEUE_START", ""},
    {Stage::kQueueLeave, "COMPUTE_START", ""},
    {Stage::kInferStart, "COMPUTE_INPUT_END", ""},
    {Stage::kInferEnd, "COMPUTE_OUTPUT_START", ""},
    {Stage::kPostprocessed, "COMPUTE_END", ""},
    {Stage::kSent, "", "_SEND_END"},
}};

}  // namespace

std::string_view SampleReasonName(SampleReason reason) {
  switch (reason) {
    case SampleReason::kNotSampled:
      return "not_sampled";
    case SampleReason::kParent:
      return "parent";
    case SampleReason::kError:
      return "error";
    case SampleReason::kSlo:
      return "slo";
    case SampleReason::kRate:
      return "rate";
  }
  return "not_sampled";
}

absl::StatusOr<std::unique_ptr<Tracer>> Tracer::Create(Options options, SpanProcessor* processor) {
  if (!(options.sample_rate >= 0.0 && options.sample_rate <= 1.0)) {
    return absl::InvalidArgumentError(
        StrCat("tracer: sample_rate must be within [0, 1], got ", options.sample_rate));
  }
  if (options.slo_ns < 0) {
    return absl::InvalidArgumentError(
        StrCat("tracer: slo_ns must not be negative, got ", options.slo_ns));
  }
  if (processor == nullptr) return absl::InvalidArgumentError("tracer: no span processor");
  if (options.clock == nullptr) return absl::InvalidArgumentError("tracer: no clock");
  const int64_t offset = options.wall_offset_ns.has_value() ? *options.wall_offset_ns
                                                            : WallNowNs() - options.clock->NowNs();
  return std::make_unique<Tracer>(options, processor, offset);
}

SampleReason Tracer::Decide(const std::optional<TraceContext>& parent, const absl::Status& status,
                            const StageClock& clock) const {
  return Decide(parent, status, clock, {.enabled = true, .sample_rate = options_.sample_rate});
}

SampleReason Tracer::Decide(const std::optional<TraceContext>& parent, const absl::Status& status,
                            const StageClock& clock, const Sampling& sampling) const {
  if (!sampling.enabled) return SampleReason::kNotSampled;
  if (parent.has_value() && options_.follow_parent && parent->sampled()) {
    return SampleReason::kParent;
  }
  if (!status.ok() && options_.sample_errors) return SampleReason::kError;
  if (options_.slo_ns > 0) {
    const std::optional<int64_t> total_ns = LatencyStageNs(clock, LatencyStage::kTotal);
    if (total_ns.has_value() && *total_ns > options_.slo_ns) return SampleReason::kSlo;
  }
  const bool parent_declined = parent.has_value() && options_.follow_parent;
  if (!parent_declined && ThreadRandomChance(sampling.sample_rate)) return SampleReason::kRate;
  return SampleReason::kNotSampled;
}

std::vector<SpanData> Tracer::BuildSpans(const std::optional<TraceContext>& parent,
                                         const RequestTraceInfo& info, const StageClock& clock,
                                         SampleReason reason, const TraceId& trace_id) const {
  // The request's extent: t0 → t5, or the earliest and latest stamps it has.
  int64_t first_ns = 0;
  int64_t last_ns = 0;
  for (int i = 0; i < kNumStages; ++i) {
    const int64_t ns = clock.at(static_cast<Stage>(i));
    if (ns == 0) continue;
    if (first_ns == 0 || ns < first_ns) first_ns = ns;
    last_ns = std::max(last_ns, ns);
  }
  if (clock.has(Stage::kArrival)) first_ns = clock.at(Stage::kArrival);
  if (clock.has(Stage::kSent)) last_ns = std::max(last_ns, clock.at(Stage::kSent));

  uint8_t w3c_flags = kTraceFlagSampled;
  if (!parent.has_value()) w3c_flags |= kTraceFlagRandom;
  const std::string trace_state = parent.has_value() ? parent->trace_state : std::string();

  std::vector<SpanData> spans;
  spans.reserve((1 + kNumPipelineStages) * (1 + info.steps.size()));
  SpanData& root = spans.emplace_back();
  root.trace_id = trace_id;
  root.span_id = NewSpanId();
  if (parent.has_value()) root.parent_span_id = parent->parent_span_id;
  root.trace_state = trace_state;
  root.flags = w3c_flags | kFlagHasIsRemote | (parent.has_value() ? kFlagIsRemote : 0);
  root.name = "infer";
  root.kind = SpanKind::kServer;
  root.start_unix_ns = ToWallNs(first_ns);
  root.end_unix_ns = ToWallNs(last_ns);
  root.attributes = {
      {"model_name", std::string(info.model)},
      {"model_version", std::string(info.version)},
      {"request_id", std::string(info.request_id)},
      {"brigade.protocol", std::string(ProtocolName(info.protocol))},
      {"brigade.cache_hit", info.cache_hit},
      {"brigade.sample_reason", std::string(SampleReasonName(reason))},
  };
  if (info.batch_size > 0) {
    root.attributes.push_back({"brigade.batch_size", static_cast<int64_t>(info.batch_size)});
  }
  if (!info.status.ok()) {
    root.status = SpanStatusCode::kError;
    root.status_message =
        StrCat(absl::StatusCodeToString(info.status.code()), ": ", ToStd(info.status.message()));
  }
  for (const StampEvent& event : kStampEvents) {
    if (!clock.has(event.stage)) continue;
    std::string name = event.name.empty() ? StrCat(ProtocolPrefix(info.protocol), event.suffix)
                                          : std::string(event.name);
    root.events.push_back({std::move(name), ToWallNs(clock.at(event.stage))});
  }
  std::stable_sort(
      root.events.begin(), root.events.end(),
      [](const SpanEvent& a, const SpanEvent& b) { return a.time_unix_ns < b.time_unix_ns; });

  // An INTERNAL child of `parent_id`; spans' capacity was reserved, so no reference moves.
  auto add_child = [&](const SpanId& parent_id) -> SpanData& {
    SpanData& child = spans.emplace_back();
    child.trace_id = trace_id;
    child.span_id = NewSpanId();
    child.parent_span_id = parent_id;
    child.trace_state = trace_state;
    child.flags = w3c_flags | kFlagHasIsRemote;
    child.kind = SpanKind::kInternal;
    return child;
  };
  auto add_stages = [&](const SpanId& parent_id, const StageClock& stamps, int batch_size) {
    for (int i = 0; i < kNumPipelineStages; ++i) {
      const auto stage = static_cast<LatencyStage>(i);
      if (!LatencyStageNs(stamps, stage).has_value()) continue;
      const StageBounds bounds = LatencyStageBounds(stage);
      SpanData& child = add_child(parent_id);
      child.name = std::string(LatencyStageName(stage));
      child.start_unix_ns = ToWallNs(stamps.at(bounds.from));
      child.end_unix_ns = ToWallNs(stamps.at(bounds.to));
      if (stage == LatencyStage::kCompute && batch_size > 0) {
        child.attributes.push_back({"brigade.batch_size", static_cast<int64_t>(batch_size)});
      }
    }
  };
  const SpanId root_id = root.span_id;
  add_stages(root_id, clock, info.batch_size);
  for (size_t i = 0; i < info.steps.size(); ++i) {
    const StepRecord& step = info.steps[i];
    int64_t step_first = 0;
    int64_t step_last = 0;
    for (int s = 0; s < kNumStages; ++s) {
      const int64_t ns = step.clock.at(static_cast<Stage>(s));
      if (ns == 0) continue;
      if (step_first == 0 || ns < step_first) step_first = ns;
      step_last = std::max(step_last, ns);
    }
    if (step_first == 0) continue;  // no stamps: nothing to draw
    SpanData& span = add_child(root_id);
    span.name = "step";
    span.start_unix_ns = ToWallNs(step_first);
    span.end_unix_ns = ToWallNs(step_last);
    if (!step.model_name.empty()) {
      span.attributes = {{"model_name", step.model_name}, {"model_version", step.model_version}};
    }
    span.attributes.push_back({"brigade.step", static_cast<int64_t>(i)});
    span.attributes.push_back({"brigade.cache_hit", step.execution.cache_hit});
    if (!step.step.empty()) span.attributes.push_back({"brigade.step_name", step.step});
    if (!step.branch.empty()) span.attributes.push_back({"brigade.branch", step.branch});
    if (step.execution.batch_size > 0) {
      span.attributes.push_back(
          {"brigade.batch_size", static_cast<int64_t>(step.execution.batch_size)});
    }
    add_stages(span.span_id, step.clock, step.execution.batch_size);
  }
  return spans;
}

TraceResult Tracer::Finish(const std::optional<TraceContext>& parent, const RequestTraceInfo& info,
                           const StageClock& clock) const {
  return Finish(parent, info, clock, {.enabled = true, .sample_rate = options_.sample_rate});
}

TraceResult Tracer::Finish(const std::optional<TraceContext>& parent, const RequestTraceInfo& info,
                           const StageClock& clock, const Sampling& sampling) const {
  TraceResult result;
  result.reason = Decide(parent, info.status, clock, sampling);
  if (!result.sampled()) return result;
  result.trace_id = parent.has_value() ? parent->trace_id : NewTraceId();
  std::vector<SpanData> spans = BuildSpans(parent, info, clock, result.reason, result.trace_id);
  result.root_span_id = spans.front().span_id;
  result.submitted = processor_->Submit(std::move(spans));
  return result;
}

}  // namespace brigade::telemetry
