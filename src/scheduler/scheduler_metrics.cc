#include "scheduler/scheduler_metrics.h"

#include <cmath>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "telemetry/histogram.h"
#include "telemetry/prometheus_text.h"

namespace brigade::scheduler {
namespace {

using telemetry::HistogramBuckets;
using telemetry::HistogramSnapshot;
using telemetry::LabelPair;
using telemetry::MetricType;
using telemetry::PrometheusTextWriter;

// DurationHistogram's bounds, observed in µs and exposed in seconds.
const HistogramBuckets& DurationBuckets() {
  static const HistogramBuckets buckets =
      *HistogramBuckets::Create(std::vector<int64_t>(DurationHistogram::kUpperBoundsUs.begin(),
                                                     DurationHistogram::kUpperBoundsUs.end()),
                                1'000'000);
  return buckets;
}

HistogramSnapshot DurationSnapshot(const DurationHistogram& histogram) {
  HistogramSnapshot snapshot;
  snapshot.counts.assign(histogram.counts.begin(), histogram.counts.end());
  snapshot.sum = static_cast<uint64_t>(std::llround(histogram.sum_us));
  return snapshot;
}

// Batch sizes 1, 2, ..., 16 exactly, then powers of two, ending with the largest size seen.
HistogramBuckets BatchSizeBuckets(int max_rows) {
  std::vector<int64_t> bounds;
  for (int64_t rows = 1; rows <= max_rows; rows = rows < 16 ? rows + 1 : rows * 2) {
    bounds.push_back(rows);
  }
  if (bounds.empty() || bounds.back() < max_rows) bounds.push_back(max_rows);
  return *HistogramBuckets::Create(std::move(bounds));
}

HistogramSnapshot BatchSizeSnapshot(const SchedulerSnapshot& scheduler,
                                    const HistogramBuckets& buckets) {
  HistogramSnapshot snapshot;
  snapshot.counts.assign(buckets.size() + 1, 0);
  for (size_t rows = 1; rows < scheduler.batch_rows.size(); ++rows) {
    const uint64_t batches = scheduler.batch_rows[rows];
    snapshot.counts[buckets.Index(static_cast<int64_t>(rows))] += batches;
    snapshot.sum += batches * rows;
  }
  return snapshot;
}

struct RefusalReason {
  std::string_view name;
  uint64_t SchedulerSnapshot::*count;
};
constexpr RefusalReason kRefusalReasons[] = {
    {"queue_full", &SchedulerSnapshot::refused_queue_full},
    {"level_full", &SchedulerSnapshot::refused_level_full},
    {"expired", &SchedulerSnapshot::refused_expired},
    {"predicted_late", &SchedulerSnapshot::refused_predicted_late},
    {"draining", &SchedulerSnapshot::refused_draining},
};

// Writes one family: its HELP/TYPE, then `samples` once per scheduler with its model/version.
class FamilyWriter {
 public:
  FamilyWriter(std::span<const SchedulerSnapshot> schedulers, std::string* out)
      : schedulers_(schedulers), writer_(out) {
    versions_.reserve(schedulers.size());
    for (const SchedulerSnapshot& scheduler : schedulers) {
      versions_.push_back(std::to_string(scheduler.version));
    }
  }

  using Samples =
      std::function<void(PrometheusTextWriter& writer, const std::string& name,
                         const SchedulerSnapshot& scheduler, std::span<const LabelPair> labels)>;

  void Family(std::string_view suffix, std::string_view help, MetricType type,
              const Samples& samples) {
    const std::string name = std::string("brigade_scheduler_").append(suffix);
    writer_.Family(name, help, type);
    for (size_t i = 0; i < schedulers_.size(); ++i) {
      const LabelPair labels[] = {{"model", schedulers_[i].model_name}, {"version", versions_[i]}};
      samples(writer_, name, schedulers_[i], labels);
    }
  }

  // A family with one sample per scheduler.
  void Single(std::string_view suffix, std::string_view help, MetricType type,
              const std::function<double(const SchedulerSnapshot&)>& value) {
    Family(suffix, help, type,
           [&](PrometheusTextWriter& writer, const std::string& name,
               const SchedulerSnapshot& scheduler, std::span<const LabelPair> labels) {
             writer.Sample(name, labels, value(scheduler));
           });
  }

  void Duration(std::string_view suffix, std::string_view help,
                DurationHistogram SchedulerSnapshot::*histogram) {
    Family(suffix, help, MetricType::kHistogram,
           [&](PrometheusTextWriter& writer, const std::string& name,
               const SchedulerSnapshot& scheduler, std::span<const LabelPair> labels) {
             writer.HistogramSamples(name, labels, DurationBuckets(),
                                     DurationSnapshot(scheduler.*histogram));
           });
  }

 private:
  std::span<const SchedulerSnapshot> schedulers_;
  PrometheusTextWriter writer_;
  std::vector<std::string> versions_;
};

// labels + one more pair.
std::vector<LabelPair> With(std::span<const LabelPair> labels, LabelPair extra) {
  std::vector<LabelPair> out(labels.begin(), labels.end());
  out.push_back(extra);
  return out;
}

}  // namespace

void AppendSchedulerMetrics(std::span<const SchedulerSnapshot> schedulers, std::string* out) {
  if (schedulers.empty()) return;
  FamilyWriter families(schedulers, out);
  families.Family("info", "The batch policy each model version's scheduler runs (value 1)",
                  MetricType::kGauge,
                  [](PrometheusTextWriter& writer, const std::string& name,
                     const SchedulerSnapshot& scheduler, std::span<const LabelPair> labels) {
                    writer.Sample(name, With(labels, {"policy", scheduler.policy}), int64_t{1});
                  });

  // Admission.
  families.Single("admitted_total", "Requests the scheduler's queue admitted", MetricType::kCounter,
                  [](const SchedulerSnapshot& s) { return static_cast<double>(s.admitted); });
  families.Family(
      "refused_total",
      "Requests refused at once, by reason (predicted_late is admission control shedding load)",
      MetricType::kCounter,
      [](PrometheusTextWriter& writer, const std::string& name, const SchedulerSnapshot& scheduler,
         std::span<const LabelPair> labels) {
        for (const RefusalReason& reason : kRefusalReasons) {
          writer.Sample(name, With(labels, {"reason", reason.name}), scheduler.*reason.count);
        }
      });
  families.Duration("refusal_latency_seconds",
                    "Time from a request reaching the queue to its refusal being answered",
                    &SchedulerSnapshot::refusal_latency);

  // Left the queue without running.
  families.Single("timeouts_total", "Requests removed from the queue when their timeout passed",
                  MetricType::kCounter,
                  [](const SchedulerSnapshot& s) { return static_cast<double>(s.timed_out); });
  families.Single("cancellations_total",
                  "Requests cancelled by their client while queued or before their batch started",
                  MetricType::kCounter,
                  [](const SchedulerSnapshot& s) { return static_cast<double>(s.cancelled); });
  families.Single("delayed_total",
                  "Requests that timed out under a DELAY policy and were moved behind their level",
                  MetricType::kCounter,
                  [](const SchedulerSnapshot& s) { return static_cast<double>(s.delayed); });

  // Batch decisions.
  families.Family("batches_total", "Batches released, by the reason the batch policy gave",
                  MetricType::kCounter,
                  [](PrometheusTextWriter& writer, const std::string& name,
                     const SchedulerSnapshot& scheduler, std::span<const LabelPair> labels) {
                    for (int r = 1; r < kNumBatchReasons; ++r) {
                      const auto reason = static_cast<BatchReason>(r);
                      writer.Sample(name, With(labels, {"reason", BatchReasonName(reason)}),
                                    scheduler.reasons[static_cast<size_t>(r)]);
                    }
                  });
  families.Family(
      "batch_size", "Rows in each batch the batch policy released", MetricType::kHistogram,
      [](PrometheusTextWriter& writer, const std::string& name, const SchedulerSnapshot& scheduler,
         std::span<const LabelPair> labels) {
        const int max_rows = std::max(1, static_cast<int>(scheduler.batch_rows.size()) - 1);
        const HistogramBuckets buckets = BatchSizeBuckets(max_rows);
        writer.HistogramSamples(name, labels, buckets, BatchSizeSnapshot(scheduler, buckets));
      });
  families.Duration("batch_wait_seconds",
                    "How long the oldest request of each released batch had waited in the queue",
                    &SchedulerSnapshot::batch_wait);
  families.Duration("predicted_p99_seconds",
                    "The latency profile's p99 service time for each released batch's size",
                    &SchedulerSnapshot::predicted_p99);
  families.Duration("service_seconds", "Measured service time of each executed batch",
                    &SchedulerSnapshot::service);
  families.Single("inline_batches_total",
                  "Batches run on the thread that enqueued them (run to completion, no hand-off)",
                  MetricType::kCounter,
                  [](const SchedulerSnapshot& s) { return static_cast<double>(s.inline_batches); });
  families.Single("predicted_batches_total", "Executed batches that had a service-time prediction",
                  MetricType::kCounter, [](const SchedulerSnapshot& s) {
                    return static_cast<double>(s.predicted_batches);
                  });
  families.Single("slower_than_predicted_p99_total",
                  "Executed batches whose measured service time exceeded their predicted p99",
                  MetricType::kCounter, [](const SchedulerSnapshot& s) {
                    return static_cast<double>(s.slower_than_predicted_p99);
                  });
  families.Single("p50_prediction_error_seconds_total",
                  "Sum over predicted batches of |measured service time - predicted p50|",
                  MetricType::kCounter,
                  [](const SchedulerSnapshot& s) { return s.abs_error_p50_us_sum / 1e6; });

  // Live state.
  families.Single("queue_requests", "Requests waiting in the scheduler's queue", MetricType::kGauge,
                  [](const SchedulerSnapshot& s) { return static_cast<double>(s.queue_size); });
  families.Single(
      "held_for_ordering", "Answers held back to preserve arrival order", MetricType::kGauge,
      [](const SchedulerSnapshot& s) { return static_cast<double>(s.held_for_ordering); });
  families.Single("arrival_rows_per_second", "Admitted rows per second (decayed)",
                  MetricType::kGauge,
                  [](const SchedulerSnapshot& s) { return s.arrival_rows_per_s; });
  families.Single("utilization", "Fraction of instance time spent running batches (decayed)",
                  MetricType::kGauge, [](const SchedulerSnapshot& s) { return s.utilization; });
  for (const bool p99 : {false, true}) {
    families.Family(p99 ? "profile_p99_seconds" : "profile_p50_seconds",
                    p99 ? "Latency profile: p99 service time by instance and batch size"
                        : "Latency profile: p50 service time by instance and batch size",
                    MetricType::kGauge,
                    [p99](PrometheusTextWriter& writer, const std::string& name,
                          const SchedulerSnapshot& scheduler, std::span<const LabelPair> labels) {
                      for (const LatencyProfile::Point& point : scheduler.profile) {
                        const std::string instance =
                            point.instance < 0 ? "pooled" : std::to_string(point.instance);
                        const std::string rows = std::to_string(point.rows);
                        std::vector<LabelPair> series = With(labels, {"instance", instance});
                        series.push_back({"batch_size", rows});
                        writer.Sample(name, series,
                                      static_cast<double>(p99 ? point.p99_ns : point.p50_ns) / 1e9);
                      }
                    });
  }
}

}  // namespace brigade::scheduler
