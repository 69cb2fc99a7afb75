#include "telemetry/prometheus_text.h"

#include <cmath>

#include "absl/strings/ascii.h"
#include "core/strings.h"

namespace brigade::telemetry {
namespace {

void AppendEscaped(std::string_view text, bool escape_quote, std::string* out) {
  for (char c : text) {
    switch (c) {
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '"':
        if (escape_quote) {
          out->append("\\\"");
        } else {
          out->push_back(c);
        }
        break;
      default:
        out->push_back(c);
    }
  }
}

std::string_view TypeName(MetricType type) {
  switch (type) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
  }
  return "untyped";
}

}  // namespace

bool IsValidMetricName(std::string_view name) {
  if (name.empty() || !(absl::ascii_isalpha(name[0]) || name[0] == '_' || name[0] == ':'))
    return false;
  for (char c : name) {
    if (!(absl::ascii_isalpha(c) || absl::ascii_isdigit(c) || c == '_' || c == ':')) return false;
  }
  return true;
}

bool IsValidLabelName(std::string_view name) {
  if (name.empty() || !(absl::ascii_isalpha(name[0]) || name[0] == '_')) return false;
  if (name.starts_with("__")) return false;
  for (char c : name) {
    if (!(absl::ascii_isalpha(c) || absl::ascii_isdigit(c) || c == '_')) return false;
  }
  return true;
}

std::string FormatPrometheusValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", value);
}

void PrometheusTextWriter::Family(std::string_view name, std::string_view help, MetricType type) {
  out_->append("# HELP ");
  out_->append(name);
  out_->push_back(' ');
  AppendEscaped(help, /*escape_quote=*/false, out_);
  out_->append("\n# TYPE ");
  out_->append(name);
  out_->push_back(' ');
  out_->append(TypeName(type));
  out_->push_back('\n');
}

void PrometheusTextWriter::SampleHead(std::string_view name, std::string_view suffix,
                                      std::span<const LabelPair> labels, std::string_view le) {
  out_->append(name);
  out_->append(suffix);
  if (!labels.empty() || !le.empty()) {
    out_->push_back('{');
    bool first = true;
    for (const LabelPair& label : labels) {
      if (!first) out_->push_back(',');
      first = false;
      out_->append(label.name);
      out_->append("=\"");
      AppendEscaped(label.value, /*escape_quote=*/true, out_);
      out_->push_back('"');
    }
    if (!le.empty()) {
      if (!first) out_->push_back(',');
      out_->append("le=\"");
      out_->append(le);
      out_->push_back('"');
    }
    out_->push_back('}');
  }
  out_->push_back(' ');
}

void PrometheusTextWriter::Sample(std::string_view name, std::span<const LabelPair> labels,
                                  double value) {
  SampleHead(name, "", labels, "");
  out_->append(FormatPrometheusValue(value));
  out_->push_back('\n');
}

void PrometheusTextWriter::Sample(std::string_view name, std::span<const LabelPair> labels,
                                  uint64_t value) {
  SampleHead(name, "", labels, "");
  fmt::format_to(std::back_inserter(*out_), "{}\n", value);
}

void PrometheusTextWriter::Sample(std::string_view name, std::span<const LabelPair> labels,
                                  int64_t value) {
  SampleHead(name, "", labels, "");
  fmt::format_to(std::back_inserter(*out_), "{}\n", value);
}

void PrometheusTextWriter::HistogramSamples(std::string_view name,
                                            std::span<const LabelPair> labels,
                                            const HistogramBuckets& buckets,
                                            const HistogramSnapshot& snapshot) {
  uint64_t cumulative = 0;
  for (size_t i = 0; i < buckets.size(); ++i) {
    cumulative += i < snapshot.counts.size() ? snapshot.counts[i] : 0;
    const std::string le =
        FormatPrometheusValue(buckets.Expose(static_cast<double>(buckets.upper_bounds()[i])));
    SampleHead(name, "_bucket", labels, le);
    fmt::format_to(std::back_inserter(*out_), "{}\n", cumulative);
  }
  const uint64_t count = snapshot.count();
  SampleHead(name, "_bucket", labels, "+Inf");
  fmt::format_to(std::back_inserter(*out_), "{}\n", count);
  SampleHead(name, "_sum", labels, "");
  out_->append(FormatPrometheusValue(buckets.Expose(static_cast<double>(snapshot.sum))));
  out_->push_back('\n');
  SampleHead(name, "_count", labels, "");
  fmt::format_to(std::back_inserter(*out_), "{}\n", count);
}

}  // namespace brigade::telemetry
