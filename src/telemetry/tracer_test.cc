#include "telemetry/tracer.h"

#include <algorithm>

#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::telemetry {
namespace {

using ::testing::ElementsAre;

constexpr int64_t kWallOffsetNs = 1'700'000'000'000'000'000;

class CapturingExporter final : public SpanExporter {
 public:
  explicit CapturingExporter(std::vector<SpanData>* out, absl::Mutex* mu) : out_(out), mu_(mu) {}
  absl::Status Export(std::span<const SpanData> spans) override {
    absl::MutexLock lock(mu_);
    out_->insert(out_->end(), spans.begin(), spans.end());
    return absl::OkStatus();
  }

 private:
  std::vector<SpanData>* out_;
  absl::Mutex* mu_;
};

StageClock FullClock() {
  StageClock clock;
  clock.Mark(Stage::kArrival, 1'000);
  clock.Mark(Stage::kDecoded, 1'100);
  clock.Mark(Stage::kPreprocessed, 1'200);
  clock.Mark(Stage::kQueueEnter, 1'210);
  clock.Mark(Stage::kQueueLeave, 2'000);
  clock.Mark(Stage::kInferStart, 2'050);
  clock.Mark(Stage::kInferEnd, 9'000);
  clock.Mark(Stage::kPostprocessed, 9'100);
  clock.Mark(Stage::kSent, 10'000);
  return clock;
}

class TracerTest : public ::testing::Test {
 protected:
  std::unique_ptr<Tracer> MakeTracer(Tracer::Options options) {
    options.clock = &clock_;
    options.wall_offset_ns = kWallOffsetNs;
    return *Tracer::Create(options, processor_.get());
  }
  std::vector<SpanData> Exported() {
    EXPECT_TRUE(processor_->Flush(absl::Seconds(10)));
    absl::MutexLock lock(&mu_);
    return exported_;
  }

  FakeClock clock_;
  absl::Mutex mu_;
  std::vector<SpanData> exported_;
  std::unique_ptr<SpanProcessor> processor_ =
      *SpanProcessor::Create({}, std::make_unique<CapturingExporter>(&exported_, &mu_));
};

const std::optional<TraceContext> kSampledParent =
    ExtractTraceContext("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "congo=x");
const std::optional<TraceContext> kUnsampledParent =
    ExtractTraceContext("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00", std::nullopt);

TEST_F(TracerTest, CreateValidatesOptions) {
  EXPECT_FALSE(Tracer::Create({.sample_rate = 1.5}, processor_.get()).ok());
  EXPECT_FALSE(Tracer::Create({.slo_ns = -1}, processor_.get()).ok());
  EXPECT_FALSE(Tracer::Create({}, nullptr).ok());
}

TEST_F(TracerTest, DecisionFollowsParentErrorSloThenRate) {
  const auto never = MakeTracer({.sample_rate = 0.0, .slo_ns = 5'000});
  const auto always = MakeTracer({.sample_rate = 1.0});
  const StageClock fast = [] {
    StageClock c;
    c.Mark(Stage::kArrival, 100);
    c.Mark(Stage::kSent, 200);
    return c;
  }();
  EXPECT_EQ(never->Decide(kSampledParent, absl::OkStatus(), fast), SampleReason::kParent);
  EXPECT_EQ(never->Decide(std::nullopt, absl::InternalError("x"), fast), SampleReason::kError);
  EXPECT_EQ(never->Decide(std::nullopt, absl::OkStatus(), FullClock()), SampleReason::kSlo);
  EXPECT_EQ(never->Decide(std::nullopt, absl::OkStatus(), fast), SampleReason::kNotSampled);
  EXPECT_EQ(always->Decide(std::nullopt, absl::OkStatus(), fast), SampleReason::kRate);
  // A parent that did not sample is respected by the rate, but not over errors.
  EXPECT_EQ(always->Decide(kUnsampledParent, absl::OkStatus(), fast), SampleReason::kNotSampled);
  EXPECT_EQ(always->Decide(kUnsampledParent, absl::CancelledError("x"), fast),
            SampleReason::kError);
  const auto no_errors = MakeTracer({.sample_errors = false});
  EXPECT_EQ(no_errors->Decide(std::nullopt, absl::InternalError("x"), fast),
            SampleReason::kNotSampled);
}

TEST_F(TracerTest, RateSamplesRoughlyThatFraction) {
  const auto tracer = MakeTracer({.sample_rate = 0.25});
  int sampled = 0;
  for (int i = 0; i < 20000; ++i) {
    sampled += tracer->Decide(std::nullopt, absl::OkStatus(), StageClock()) == SampleReason::kRate;
  }
  EXPECT_GT(sampled, 4500);
  EXPECT_LT(sampled, 5500);
}

TEST_F(TracerTest, SpansFollowTheStageClockInWallTime) {
  const auto tracer = MakeTracer({});
  const RequestTraceInfo info{.model = "resnet",
                              .version = "2",
                              .request_id = "req-7",
                              .protocol = Protocol::kHttp,
                              .batch_size = 4};
  const std::vector<SpanData> spans = tracer->BuildSpans(
      kSampledParent, info, FullClock(), SampleReason::kParent, kSampledParent->trace_id);
  ASSERT_EQ(spans.size(), 7u);
  const SpanData& root = spans[0];
  EXPECT_EQ(root.name, "infer");
  EXPECT_EQ(root.kind, SpanKind::kServer);
  EXPECT_EQ(root.trace_id.Hex(), "0af7651916cd43dd8448eb211c80319c");
  EXPECT_EQ(root.parent_span_id.Hex(), "b7ad6b7169203331");
  EXPECT_EQ(root.trace_state, "congo=x");
  EXPECT_EQ(root.start_unix_ns, kWallOffsetNs + 1'000);
  EXPECT_EQ(root.end_unix_ns, kWallOffsetNs + 10'000);
  EXPECT_EQ(root.status, SpanStatusCode::kUnset);
  EXPECT_EQ(root.flags, 0x301u);  // sampled, parent known to be remote
  std::vector<std::string> events;
  for (const SpanEvent& event : root.events) events.push_back(event.name);
  EXPECT_THAT(events, ElementsAre("HTTP_RECV_START", "HTTP_RECV_END", "PREPROCESS_END",
                                  "QUEUE_START", "COMPUTE_START", "COMPUTE_INPUT_END",
                                  "COMPUTE_OUTPUT_START", "COMPUTE_END", "HTTP_SEND_END"));
  const auto has_attribute = [&](std::string_view key, const decltype(SpanAttribute::value)& v) {
    return std::any_of(root.attributes.begin(), root.attributes.end(),
                       [&](const SpanAttribute& a) { return a.key == key && a.value == v; });
  };
  EXPECT_TRUE(has_attribute("model_name", std::string("resnet")));
  EXPECT_TRUE(has_attribute("request_id", std::string("req-7")));
  EXPECT_TRUE(has_attribute("brigade.batch_size", int64_t{4}));
  EXPECT_TRUE(has_attribute("brigade.sample_reason", std::string("parent")));

  std::vector<std::string> children;
  for (size_t i = 1; i < spans.size(); ++i) {
    children.push_back(spans[i].name);
    EXPECT_EQ(spans[i].parent_span_id, root.span_id);
    EXPECT_EQ(spans[i].trace_id, root.trace_id);
    EXPECT_NE(spans[i].span_id, root.span_id);
  }
  EXPECT_THAT(children,
              ElementsAre("receive", "preprocess", "queue", "compute", "postprocess", "send"));
  EXPECT_EQ(spans[4].start_unix_ns, kWallOffsetNs + 2'000);  // compute: queue leave → t3
  EXPECT_EQ(spans[4].end_unix_ns, kWallOffsetNs + 9'000);
}

TEST_F(TracerTest, FailedCacheHitHasErrorStatusAndOnlyItsStages) {
  const auto tracer = MakeTracer({});
  StageClock clock;
  clock.Mark(Stage::kArrival, 100);
  clock.Mark(Stage::kDecoded, 150);
  clock.Mark(Stage::kPreprocessed, 170);
  clock.Mark(Stage::kSent, 300);
  const RequestTraceInfo info{.protocol = Protocol::kGrpc,
                              .status = absl::UnavailableError("queue full"),
                              .cache_hit = true};
  const std::vector<SpanData> spans =
      tracer->BuildSpans(std::nullopt, info, clock, SampleReason::kError, NewTraceId());
  ASSERT_EQ(spans.size(), 3u);
  EXPECT_EQ(spans[0].status, SpanStatusCode::kError);
  EXPECT_EQ(spans[0].status_message, "UNAVAILABLE: queue full");
  EXPECT_FALSE(spans[0].parent_span_id.valid());
  EXPECT_EQ(spans[0].flags, 0x103u);  // sampled + random id, parent known to be local/none
  EXPECT_EQ(spans[0].events.front().name, "GRPC_RECV_START");
  EXPECT_EQ(spans[1].name, "receive");
  EXPECT_EQ(spans[2].name, "preprocess");
}

// An ensemble's trace: a "step" span per step under the root, over the step's own stamps, each
// with the step's stage spans beneath it.
TEST_F(TracerTest, AnEnsembleHasASpanPerStepWithItsOwnStages) {
  const auto tracer = MakeTracer({});
  StageClock first;  // a step is not decoded: it has no receive or preprocess stage
  first.Mark(Stage::kArrival, 2'000);
  first.Mark(Stage::kPreprocessed, 2'100);
  first.Mark(Stage::kQueueEnter, 2'200);
  first.Mark(Stage::kQueueLeave, 2'500);
  first.Mark(Stage::kInferStart, 2'550);
  first.Mark(Stage::kInferEnd, 4'000);
  first.Mark(Stage::kPostprocessed, 4'100);
  StageClock cached;  // a step answered from its model's cache: no queue, no compute
  cached.Mark(Stage::kArrival, 4'200);
  cached.Mark(Stage::kPostprocessed, 4'300);
  const std::vector<StepRecord> steps = {
      {.model_name = "tokenize",
       .model_version = "1",
       .clock = first,
       .execution = {.batch_size = 3}},
      {.model_name = "classify",
       .model_version = "2",
       .clock = cached,
       .execution = {.cache_hit = true}},
  };
  const RequestTraceInfo info{.model = "pipeline", .version = "1", .steps = steps};
  const std::vector<SpanData> spans =
      tracer->BuildSpans(std::nullopt, info, FullClock(), SampleReason::kRate, NewTraceId());
  std::vector<const SpanData*> step_spans;
  for (const SpanData& span : spans) {
    if (span.name == "step") step_spans.push_back(&span);
  }
  ASSERT_EQ(step_spans.size(), 2u);
  const SpanData& one = *step_spans[0];
  EXPECT_EQ(one.parent_span_id, spans[0].span_id);
  EXPECT_EQ(one.start_unix_ns, kWallOffsetNs + 2'000);
  EXPECT_EQ(one.end_unix_ns, kWallOffsetNs + 4'100);
  auto attribute = [](const SpanData& span, std::string_view key) {
    for (const SpanAttribute& a : span.attributes) {
      if (a.key == key) return a.value;
    }
    return decltype(SpanAttribute::value)();
  };
  EXPECT_EQ(attribute(one, "model_name"), decltype(SpanAttribute::value)(std::string("tokenize")));
  EXPECT_EQ(attribute(one, "brigade.batch_size"), decltype(SpanAttribute::value)(int64_t{3}));
  EXPECT_EQ(attribute(*step_spans[1], "brigade.cache_hit"), decltype(SpanAttribute::value)(true));
  // The first step's stages hang under its span; the cached one has none to show.
  std::vector<std::string> under_one;
  std::vector<std::string> under_two;
  for (const SpanData& span : spans) {
    if (span.parent_span_id == one.span_id) under_one.push_back(span.name);
    if (span.parent_span_id == step_spans[1]->span_id) under_two.push_back(span.name);
  }
  EXPECT_THAT(under_one, ElementsAre("queue", "compute", "postprocess"));
  EXPECT_TRUE(under_two.empty());
  EXPECT_EQ(step_spans[1]->end_unix_ns - step_spans[1]->start_unix_ns, 100);
}

// A switch or fusion step runs no model: its span names the step (and a switch's branch) and
// carries no model_name.
TEST_F(TracerTest, SwitchAndFusionStepsHaveSpansNamingTheStepAndTheBranch) {
  const auto tracer = MakeTracer({});
  StageClock decided;
  decided.Mark(Stage::kInferStart, 2'000);
  decided.Mark(Stage::kInferEnd, 2'050);
  const std::vector<StepRecord> steps = {
      {.clock = decided, .step = "step 2 (switch 'by_group')", .branch = "shoes"},
      {.clock = decided, .step = "step 6 (fusion 'join')"},
  };
  const RequestTraceInfo info{.model = "sliced", .version = "1", .steps = steps};
  const std::vector<SpanData> spans =
      tracer->BuildSpans(std::nullopt, info, FullClock(), SampleReason::kRate, NewTraceId());
  std::vector<const SpanData*> step_spans;
  for (const SpanData& span : spans) {
    if (span.name == "step") step_spans.push_back(&span);
  }
  ASSERT_EQ(step_spans.size(), 2u);
  auto keys = [](const SpanData& span) {
    std::vector<std::string> out;
    for (const SpanAttribute& a : span.attributes) out.push_back(a.key);
    return out;
  };
  EXPECT_THAT(keys(*step_spans[0]), ElementsAre("brigade.step", "brigade.cache_hit",
                                                "brigade.step_name", "brigade.branch"));
  EXPECT_EQ(step_spans[0]->attributes[3].value,
            decltype(SpanAttribute::value)(std::string("shoes")));
  EXPECT_EQ(step_spans[0]->start_unix_ns, kWallOffsetNs + 2'000);
  EXPECT_EQ(step_spans[0]->end_unix_ns, kWallOffsetNs + 2'050);
  EXPECT_THAT(keys(*step_spans[1]),
              ElementsAre("brigade.step", "brigade.cache_hit", "brigade.step_name"));
}

TEST_F(TracerTest, FinishSubmitsTheSampledRequestUnderOneTraceId) {
  const auto tracer = MakeTracer({.sample_rate = 1.0});
  const TraceResult result =
      tracer->Finish(std::nullopt, RequestTraceInfo{.model = "m"}, FullClock());
  ASSERT_TRUE(result.sampled());
  EXPECT_TRUE(result.submitted);
  const std::vector<SpanData> spans = Exported();
  ASSERT_EQ(spans.size(), 7u);
  for (const SpanData& span : spans) EXPECT_EQ(span.trace_id, result.trace_id);
  EXPECT_EQ(spans[0].span_id, result.root_span_id);

  const auto never = MakeTracer({});
  EXPECT_FALSE(never->Finish(std::nullopt, RequestTraceInfo{}, FullClock()).sampled());
  EXPECT_EQ(Exported().size(), 7u);
}

}  // namespace
}  // namespace brigade::telemetry
