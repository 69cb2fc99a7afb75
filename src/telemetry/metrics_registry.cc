#include "telemetry/metrics_registry.h"

#include <algorithm>

#include "core/strings.h"

namespace brigade::telemetry {
namespace {

// The label pairs of one series, pointing into `names` and `values`.
std::vector<LabelPair> Pairs(const std::vector<std::string>& names,
                             const std::vector<std::string>& values) {
  std::vector<LabelPair> pairs;
  pairs.reserve(names.size());
  for (size_t i = 0; i < names.size() && i < values.size(); ++i) {
    pairs.push_back({names[i], values[i]});
  }
  return pairs;
}

}  // namespace

absl::Status MetricFamily::CheckLabelCount(size_t values) const {
  if (values == label_names_.size()) return absl::OkStatus();
  return absl::InvalidArgumentError(StrCat("metric ", name_, ": ", values,
                                           " label values given for ", label_names_.size(),
                                           " label names (", fmt::join(label_names_, ", "), ")"));
}

absl::StatusOr<Counter*> CounterFamily::WithLabels(std::span<const std::string_view> values) {
  if (absl::Status status = CheckLabelCount(values.size()); !status.ok()) return status;
  return series_.FindOrCreate(values, [] { return std::make_unique<Counter>(); });
}

void CounterFamily::Write(PrometheusTextWriter* writer) const {
  writer->Family(name(), help(), type());
  series_.ForEach([&](const std::vector<std::string>& values, const Counter& counter) {
    writer->Sample(name(), Pairs(label_names(), values), counter.Value());
  });
}

absl::StatusOr<Gauge*> GaugeFamily::WithLabels(std::span<const std::string_view> values) {
  if (absl::Status status = CheckLabelCount(values.size()); !status.ok()) return status;
  return series_.FindOrCreate(values, [] { return std::make_unique<Gauge>(); });
}

void GaugeFamily::Write(PrometheusTextWriter* writer) const {
  writer->Family(name(), help(), type());
  series_.ForEach([&](const std::vector<std::string>& values, const Gauge& gauge) {
    writer->Sample(name(), Pairs(label_names(), values), gauge.Value());
  });
}

absl::StatusOr<Histogram*> HistogramFamily::WithLabels(std::span<const std::string_view> values) {
  if (absl::Status status = CheckLabelCount(values.size()); !status.ok()) return status;
  return series_.FindOrCreate(values, [&] { return std::make_unique<Histogram>(buckets_); });
}

void HistogramFamily::Write(PrometheusTextWriter* writer) const {
  writer->Family(name(), help(), type());
  series_.ForEach([&](const std::vector<std::string>& values, const Histogram& histogram) {
    writer->HistogramSamples(name(), Pairs(label_names(), values), *buckets_, histogram.Snapshot());
  });
}

absl::Status MetricsRegistry::CheckNew(std::string_view name, MetricType type,
                                       const std::vector<std::string>& label_names) const {
  if (!IsValidMetricName(name)) {
    return absl::InvalidArgumentError(StrCat("metric name '", name, "' is not a valid name"));
  }
  if (type == MetricType::kCounter && !name.ends_with("_total")) {
    return absl::InvalidArgumentError(StrCat("counter ", name, ": must end in _total"));
  }
  for (size_t i = 0; i < label_names.size(); ++i) {
    const std::string& label = label_names[i];
    if (!IsValidLabelName(label)) {
      return absl::InvalidArgumentError(
          StrCat("metric ", name, ": label name '", label, "' is not a valid label name"));
    }
    if (type == MetricType::kHistogram && label == "le") {
      return absl::InvalidArgumentError(StrCat("histogram ", name, ": label 'le' is reserved"));
    }
    if (std::find(label_names.begin(), label_names.begin() + static_cast<ptrdiff_t>(i), label) !=
        label_names.begin() + static_cast<ptrdiff_t>(i)) {
      return absl::InvalidArgumentError(StrCat("metric ", name, ": label ", label, " repeated"));
    }
  }
  for (const auto& family : families_) {
    if (family->name() == name) {
      return absl::AlreadyExistsError(StrCat("metric ", name, " is already registered"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<CounterFamily*> MetricsRegistry::AddCounter(std::string_view name,
                                                           std::string_view help,
                                                           std::vector<std::string> label_names) {
  absl::MutexLock lock(&mu_);
  if (absl::Status status = CheckNew(name, MetricType::kCounter, label_names); !status.ok()) {
    return status;
  }
  auto family =
      std::make_unique<CounterFamily>(std::string(name), std::string(help), std::move(label_names));
  CounterFamily* out = family.get();
  families_.push_back(std::move(family));
  return out;
}

absl::StatusOr<GaugeFamily*> MetricsRegistry::AddGauge(std::string_view name, std::string_view help,
                                                       std::vector<std::string> label_names) {
  absl::MutexLock lock(&mu_);
  if (absl::Status status = CheckNew(name, MetricType::kGauge, label_names); !status.ok()) {
    return status;
  }
  auto family =
      std::make_unique<GaugeFamily>(std::string(name), std::string(help), std::move(label_names));
  GaugeFamily* out = family.get();
  families_.push_back(std::move(family));
  return out;
}

absl::StatusOr<HistogramFamily*> MetricsRegistry::AddHistogram(std::string_view name,
                                                               std::string_view help,
                                                               std::vector<std::string> label_names,
                                                               HistogramBuckets buckets) {
  absl::MutexLock lock(&mu_);
  if (absl::Status status = CheckNew(name, MetricType::kHistogram, label_names); !status.ok()) {
    return status;
  }
  auto family = std::make_unique<HistogramFamily>(std::string(name), std::string(help),
                                                  std::move(label_names), std::move(buckets));
  HistogramFamily* out = family.get();
  families_.push_back(std::move(family));
  return out;
}

void MetricsRegistry::AppendText(std::string* out) const {
  PrometheusTextWriter writer(out);
  absl::MutexLock lock(&mu_);
  for (const auto& family : families_) family->Write(&writer);
}

std::string MetricsRegistry::Text() const {
  std::string out;
  AppendText(&out);
  return out;
}

}  // namespace brigade::telemetry
