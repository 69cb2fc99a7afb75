#include "telemetry/span_processor.h"

#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::telemetry {
namespace {

class RecordingExporter final : public SpanExporter {
 public:
  struct Shared {
    absl::Mutex mu;
    std::vector<std::string> names ABSL_GUARDED_BY(mu);
    int batches ABSL_GUARDED_BY(mu) = 0;
    bool fail = false;
  };
  explicit RecordingExporter(Shared* shared) : shared_(shared) {}
  absl::Status Export(std::span<const SpanData> spans) override {
    absl::MutexLock lock(&shared_->mu);
    ++shared_->batches;
    for (const SpanData& span : spans) shared_->names.push_back(span.name);
    return shared_->fail ? absl::UnavailableError("down") : absl::OkStatus();
  }

 private:
  Shared* shared_;
};

std::vector<SpanData> Spans(std::initializer_list<const char*> names) {
  std::vector<SpanData> spans;
  for (const char* name : names) spans.push_back(SpanData{.name = name});
  return spans;
}

TEST(SpanProcessorTest, ExportsSubmittedSpansAndCountsThem) {
  RecordingExporter::Shared shared;
  MetricsRegistry registry;
  auto processor =
      *SpanProcessor::Create({.registry = &registry}, std::make_unique<RecordingExporter>(&shared));
  ASSERT_TRUE(processor->Submit(Spans({"infer", "queue"})));
  ASSERT_TRUE(processor->Submit(Spans({"infer"})));
  ASSERT_TRUE(processor->Flush(absl::Seconds(10)));
  {
    absl::MutexLock lock(&shared.mu);
    EXPECT_THAT(shared.names, testing::ElementsAre("infer", "queue", "infer"));
  }
  EXPECT_EQ(processor->exported_spans(), 3u);
  EXPECT_THAT(registry.Text(), testing::HasSubstr("brigade_trace_spans_exported_total 3\n"));
}

TEST(SpanProcessorTest, RequestThatDoesNotFitIsDroppedWholeAndCounted) {
  RecordingExporter::Shared shared;
  MetricsRegistry registry;
  auto processor = *SpanProcessor::Create({.max_queued_spans = 2,
                                           .max_export_batch_spans = 2,
                                           .schedule_delay = absl::Seconds(60),
                                           .registry = &registry},
                                          std::make_unique<RecordingExporter>(&shared));
  EXPECT_FALSE(processor->Submit(Spans({"a", "b", "c"})));
  EXPECT_EQ(processor->dropped_spans(), 3u);
  EXPECT_THAT(registry.Text(), testing::HasSubstr("brigade_trace_spans_dropped_total 3\n"));
}

TEST(SpanProcessorTest, ExporterFailuresAreCounted) {
  RecordingExporter::Shared shared;
  shared.fail = true;
  auto processor = *SpanProcessor::Create({}, std::make_unique<RecordingExporter>(&shared));
  ASSERT_TRUE(processor->Submit(Spans({"x"})));
  ASSERT_TRUE(processor->Flush(absl::Seconds(10)));
  EXPECT_EQ(processor->failed_exports(), 1u);
  EXPECT_EQ(processor->exported_spans(), 0u);
}

TEST(SpanProcessorTest, CreateRejectsMissingExporterAndZeroSizes) {
  EXPECT_FALSE(SpanProcessor::Create({}, nullptr).ok());
  RecordingExporter::Shared shared;
  EXPECT_FALSE(
      SpanProcessor::Create({.max_queued_spans = 0}, std::make_unique<RecordingExporter>(&shared))
          .ok());
}

}  // namespace
}  // namespace brigade::telemetry
