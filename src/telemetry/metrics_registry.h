#ifndef BRIGADE_TELEMETRY_METRICS_REGISTRY_H_
#define BRIGADE_TELEMETRY_METRICS_REGISTRY_H_

// MetricsRegistry: Brigade's metric families and their Prometheus exposition (text format 0.0.4,
// see prometheus_text.h).
//
//   registry.AddCounter("brigade_requests_total", "...", {"model", "outcome"})  → CounterFamily*
//   family->WithLabels({"resnet", "success"})                                  → Counter*
//   counter->Add()                                     (hot path: lock-free, no lookup)
//   registry.AppendText(&body)                          (scrape)
//
// The hot path never looks labels up: a caller resolves the cells it needs once (at model load,
// or lazily on first use) and keeps the pointers. Resolving takes the family's mutex only;
// recording is relaxed atomics on per-thread shards (counter.h, histogram.h).
//
// Naming rules enforced at registration (INVALID_ARGUMENT otherwise): metric and label names
// match the Prometheus grammar, counters end in `_total`, label names are unique and histograms
// do not use `le`; a family name is registered once (ALREADY_EXISTS). WithLabels answers
// INVALID_ARGUMENT when the number of values differs from the family's label names.
//
// Exposition: families in registration order, series in label-value order (deterministic
// output, golden-testable). Series are never removed: a model version that is unloaded keeps its
// final counts until the process restarts, as Prometheus counters expect.
//
// Thread safety: everything is safe from any thread. Lock order: registry, then family; scrapes
// only read atomics under them (no callbacks, no I/O).
// Ownership: the registry owns families and families own cells; both live until the registry is
// destroyed, so handles (raw pointers) are valid for the registry's lifetime.

#include <initializer_list>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "telemetry/counter.h"
#include "telemetry/histogram.h"
#include "telemetry/prometheus_text.h"

namespace brigade::telemetry {

// One named family: HELP, TYPE and the label names its series share.
class MetricFamily {
 public:
  virtual ~MetricFamily() = default;
  MetricFamily(const MetricFamily&) = delete;
  MetricFamily& operator=(const MetricFamily&) = delete;

  const std::string& name() const { return name_; }
  const std::string& help() const { return help_; }
  const std::vector<std::string>& label_names() const { return label_names_; }
  MetricType type() const { return type_; }

  // Appends HELP, TYPE and every series.
  virtual void Write(PrometheusTextWriter* writer) const = 0;

 protected:
  MetricFamily(std::string name, std::string help, std::vector<std::string> label_names,
               MetricType type)
      : name_(std::move(name)),
        help_(std::move(help)),
        label_names_(std::move(label_names)),
        type_(type) {}

  absl::Status CheckLabelCount(size_t values) const;

 private:
  const std::string name_;
  const std::string help_;
  const std::vector<std::string> label_names_;
  const MetricType type_;
};

namespace internal {

// The series of one family: label values → cell, created on first request, never removed.
template <typename Cell>
class SeriesTable {
 public:
  template <typename MakeCell>
  Cell* FindOrCreate(std::span<const std::string_view> values, const MakeCell& make_cell) {
    std::vector<std::string> key(values.begin(), values.end());
    absl::MutexLock lock(&mu_);
    std::unique_ptr<Cell>& cell = series_[std::move(key)];
    if (cell == nullptr) cell = make_cell();
    return cell.get();
  }

  // Calls fn(label values, cell) for each series in label order, under the table's lock: `fn`
  // must not call back into this family.
  template <typename Fn>
  void ForEach(const Fn& fn) const {
    absl::MutexLock lock(&mu_);
    for (const auto& [values, cell] : series_) fn(values, *cell);
  }

 private:
  mutable absl::Mutex mu_;
  std::map<std::vector<std::string>, std::unique_ptr<Cell>> series_ ABSL_GUARDED_BY(mu_);
};

}  // namespace internal

class CounterFamily final : public MetricFamily {
 public:
  CounterFamily(std::string name, std::string help, std::vector<std::string> label_names)
      : MetricFamily(std::move(name), std::move(help), std::move(label_names),
                     MetricType::kCounter) {}

  absl::StatusOr<Counter*> WithLabels(std::span<const std::string_view> values);
  absl::StatusOr<Counter*> WithLabels(std::initializer_list<std::string_view> values) {
    return WithLabels(std::span<const std::string_view>(values.begin(), values.size()));
  }
  void Write(PrometheusTextWriter* writer) const override;

 private:
  internal::SeriesTable<Counter> series_;
};

class GaugeFamily final : public MetricFamily {
 public:
  GaugeFamily(std::string name, std::string help, std::vector<std::string> label_names)
      : MetricFamily(std::move(name), std::move(help), std::move(label_names), MetricType::kGauge) {
  }

  absl::StatusOr<Gauge*> WithLabels(std::span<const std::string_view> values);
  absl::StatusOr<Gauge*> WithLabels(std::initializer_list<std::string_view> values) {
    return WithLabels(std::span<const std::string_view>(values.begin(), values.size()));
  }
  void Write(PrometheusTextWriter* writer) const override;

 private:
  internal::SeriesTable<Gauge> series_;
};

class HistogramFamily final : public MetricFamily {
 public:
  HistogramFamily(std::string name, std::string help, std::vector<std::string> label_names,
                  HistogramBuckets buckets)
      : MetricFamily(std::move(name), std::move(help), std::move(label_names),
                     MetricType::kHistogram),
        buckets_(std::make_shared<const HistogramBuckets>(std::move(buckets))) {}

  absl::StatusOr<Histogram*> WithLabels(std::span<const std::string_view> values);
  absl::StatusOr<Histogram*> WithLabels(std::initializer_list<std::string_view> values) {
    return WithLabels(std::span<const std::string_view>(values.begin(), values.size()));
  }
  void Write(PrometheusTextWriter* writer) const override;
  const HistogramBuckets& buckets() const { return *buckets_; }

 private:
  std::shared_ptr<const HistogramBuckets> buckets_;
  internal::SeriesTable<Histogram> series_;
};

class MetricsRegistry {
 public:
  MetricsRegistry() = default;
  MetricsRegistry(const MetricsRegistry&) = delete;
  MetricsRegistry& operator=(const MetricsRegistry&) = delete;

  absl::StatusOr<CounterFamily*> AddCounter(std::string_view name, std::string_view help,
                                            std::vector<std::string> label_names);
  absl::StatusOr<GaugeFamily*> AddGauge(std::string_view name, std::string_view help,
                                        std::vector<std::string> label_names);
  absl::StatusOr<HistogramFamily*> AddHistogram(std::string_view name, std::string_view help,
                                                std::vector<std::string> label_names,
                                                HistogramBuckets buckets);

  // Appends every family in the text format (see kPrometheusContentType).
  void AppendText(std::string* out) const;
  std::string Text() const;

 private:
  absl::Status CheckNew(std::string_view name, MetricType type,
                        const std::vector<std::string>& label_names) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  std::vector<std::unique_ptr<MetricFamily>> families_ ABSL_GUARDED_BY(mu_);
};

}  // namespace brigade::telemetry

#endif  // BRIGADE_TELEMETRY_METRICS_REGISTRY_H_
