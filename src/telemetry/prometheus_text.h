#ifndef BRIGADE_TELEMETRY_PROMETHEUS_TEXT_H_
#define BRIGADE_TELEMETRY_PROMETHEUS_TEXT_H_

// PrometheusTextWriter: appends metric families in the Prometheus text exposition format 0.0.4
// to a string.
//
//   # HELP <name> <help, with \ and newline escaped>
//   # TYPE <name> counter|gauge|histogram
//   <name>{<label>="<value, with \ " and newline escaped>",...} <value>
//   histograms: <name>_bucket{...,le="<bound>"} (cumulative, ending with le="+Inf"),
//               <name>_sum, <name>_count
//
// The writer formats; it does not police names (MetricsRegistry validates them at registration,
// with the IsValid* functions below), and it trusts its caller to keep a family's samples
// together after its Family() line. Values print in their shortest exact form; +Inf, -Inf and
// NaN as the format spells them.
//
// Thread safety: none; one writer per scrape. `out` is borrowed for the writer's lifetime.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "telemetry/histogram.h"

namespace brigade::telemetry {

// Content-Type of a scrape response.
inline constexpr std::string_view kPrometheusContentType =
    "text/plain; version=0.0.4; charset=utf-8";

enum class MetricType { kCounter, kGauge, kHistogram };

struct LabelPair {
  std::string_view name;
  std::string_view value;
};

// [a-zA-Z_:][a-zA-Z0-9_:]*
bool IsValidMetricName(std::string_view name);
// [a-zA-Z_][a-zA-Z0-9_]*, not starting with "__" (reserved).
bool IsValidLabelName(std::string_view name);

// A sample value as the format spells it ("1", "0.25", "1e-06", "+Inf", "NaN").
std::string FormatPrometheusValue(double value);

class PrometheusTextWriter {
 public:
  explicit PrometheusTextWriter(std::string* out) : out_(out) {}

  // The family's HELP and TYPE lines.
  void Family(std::string_view name, std::string_view help, MetricType type);

  void Sample(std::string_view name, std::span<const LabelPair> labels, double value);
  void Sample(std::string_view name, std::span<const LabelPair> labels, uint64_t value);
  void Sample(std::string_view name, std::span<const LabelPair> labels, int64_t value);

  // The _bucket, _sum and _count samples of one histogram series; bounds and sum are divided by
  // buckets.exposition_divisor().
  void HistogramSamples(std::string_view name, std::span<const LabelPair> labels,
                        const HistogramBuckets& buckets, const HistogramSnapshot& snapshot);

 private:
  // name{labels[,le="<le>"]} and the space before the value.
  void SampleHead(std::string_view name, std::string_view suffix, std::span<const LabelPair> labels,
                  std::string_view le);

  std::string* out_;
};

}  // namespace brigade::telemetry

#endif  // BRIGADE_TELEMETRY_PROMETHEUS_TEXT_H_
