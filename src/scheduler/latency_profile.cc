#include "scheduler/latency_profile.h"

#include <algorithm>
#include <cmath>
#include <span>

#include "core/check.h"

namespace brigade::scheduler {
namespace {

constexpr double kBucketRatio = 1.15;
constexpr double kFirstBucketNs = 1000;
// Regression weight of one size is capped so a flood of one size does not pin the line.
constexpr double kMaxFitWeight = 64;

int BucketOf(int64_t value_ns) {
  if (value_ns < kFirstBucketNs * kBucketRatio) return 0;
  const int bucket = static_cast<int>(std::log(static_cast<double>(value_ns) / kFirstBucketNs) /
                                      std::log(kBucketRatio));
  return std::clamp(bucket, 0, DecayingHistogram::kBuckets - 1);
}

// time = intercept + slope * rows through the weighted points; false when the points do not
// determine a line (fewer than two distinct sizes).
struct Line {
  double intercept = 0;
  double slope = 0;
};
bool FitLine(std::span<const double> xs, std::span<const double> ys, std::span<const double> ws,
             Line* line) {
  double sw = 0, sx = 0, sy = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    sw += ws[i];
    sx += ws[i] * xs[i];
    sy += ws[i] * ys[i];
  }
  if (sw <= 0) return false;
  const double mx = sx / sw, my = sy / sw;
  double sxx = 0, sxy = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    sxx += ws[i] * (xs[i] - mx) * (xs[i] - mx);
    sxy += ws[i] * (xs[i] - mx) * (ys[i] - my);
  }
  if (sxx <= 1e-9) return false;
  line->slope = std::max(0.0, sxy / sxx);  // noise must not make bigger batches look cheaper
  line->intercept = my - line->slope * mx;
  return true;
}

}  // namespace

void DecayingHistogram::DecayTo(int64_t now_ns) {
  if (total_ > 0 && now_ns > last_ns_ && half_life_ns_ > 0) {
    scale_ *=
        std::exp2(-static_cast<double>(now_ns - last_ns_) / static_cast<double>(half_life_ns_));
    if (scale_ < kRescaleBelow) {
      // Fold the scale into the counts before the next samples' increments (1 / scale) grow
      // past what a float count can add without losing them.
      for (float& count : counts_) count = static_cast<float>(count * scale_);
      total_ *= scale_;
      scale_ = 1;
    }
  }
  last_ns_ = std::max(last_ns_, now_ns);
}

void DecayingHistogram::Add(int64_t value_ns, int64_t now_ns) {
  DecayTo(now_ns);
  value_ns = std::max<int64_t>(0, value_ns);
  const auto bucket = static_cast<size_t>(BucketOf(value_ns));
  if (counts_[bucket] <= 0) {
    min_ns_[bucket] = max_ns_[bucket] = value_ns;
  } else {
    min_ns_[bucket] = std::min(min_ns_[bucket], value_ns);
    max_ns_[bucket] = std::max(max_ns_[bucket], value_ns);
  }
  // One sample in stored units: decay since the last fold is in scale_, not in the counts.
  const double one = 1.0 / scale_;
  counts_[bucket] += static_cast<float>(one);
  total_ += one;
}

double DecayingHistogram::Weight(int64_t now_ns) const {
  const double weight = total_ * scale_;
  if (weight <= 0 || now_ns <= last_ns_ || half_life_ns_ <= 0) return weight;
  return weight *
         std::exp2(-static_cast<double>(now_ns - last_ns_) / static_cast<double>(half_life_ns_));
}

int64_t DecayingHistogram::Quantile(double q) const {
  int64_t out = 0;
  Quantiles(std::span<const double>(&q, 1), std::span<int64_t>(&out, 1));
  return out;
}

void DecayingHistogram::Quantiles(std::span<const double> qs, std::span<int64_t> out) const {
  BRIGADE_CHECK(qs.size() == out.size(), "one output per quantile");
  double total = 0;
  for (float count : counts_) total += count;
  size_t next = 0;
  if (total <= 0) {
    for (int64_t& v : out) v = 0;
    return;
  }
  double seen = 0;
  int64_t largest_ns = 0;
  for (int b = 0; b < kBuckets && next < qs.size(); ++b) {
    const double count = counts_[static_cast<size_t>(b)];
    if (count <= 0) continue;
    largest_ns = max_ns_[static_cast<size_t>(b)];
    while (next < qs.size()) {
      const double target = std::clamp(qs[next], 0.0, 1.0) * total;
      if (seen + count < target) break;
      const double fraction = (target - seen) / count;
      const auto low = static_cast<double>(min_ns_[static_cast<size_t>(b)]);
      const auto high = static_cast<double>(max_ns_[static_cast<size_t>(b)]);
      out[next++] = static_cast<int64_t>(low + fraction * (high - low));
    }
    seen += count;
  }
  // Rounding may leave a target a hair above the total.
  for (; next < qs.size(); ++next) out[next] = largest_ns;
}

std::string_view LatencyProfile::SourceName(Source source) {
  switch (source) {
    case Source::kMeasured:
      return "measured";
    case Source::kPooled:
      return "pooled";
    case Source::kFitted:
      return "fitted";
    case Source::kScaled:
      return "scaled";
    case Source::kUnknown:
      break;
  }
  return "unknown";
}

LatencyProfile::LatencyProfile(Options options) : options_(options) {
  const size_t rows = static_cast<size_t>(std::max(1, options_.max_rows)) + 1;
  tables_.resize(static_cast<size_t>(std::max(1, options_.instances)) + 1);
  for (Table& table : tables_) {
    table.cells.resize(rows);
    table.curve.resize(rows);
  }
}

void LatencyProfile::AddTo(Table& table, int rows, int64_t duration_ns, int64_t now_ns) {
  auto& cell = table.cells[static_cast<size_t>(rows)];
  if (cell == nullptr) {
    cell = std::make_unique<Cell>(Cell{DecayingHistogram(options_.half_life_ns)});
  }
  cell->histogram.Add(duration_ns, now_ns);
  constexpr double kQuantiles[] = {0.50, 0.99};
  int64_t quantiles[2];
  cell->histogram.Quantiles(kQuantiles, quantiles);
  cell->p50_ns = quantiles[0];
  cell->p99_ns = quantiles[1];
  cell->weight = cell->histogram.Weight(now_ns);
  cell->fresh_until_ns =
      cell->weight < kMinSamples
          ? -1
          : now_ns + static_cast<int64_t>(static_cast<double>(options_.half_life_ns) *
                                          std::log2(cell->weight / kMinSamples));
}

bool LatencyProfile::FreshlyMeasured(int rows, int64_t now_ns) const {
  if (rows < 1 || rows > options_.max_rows) return false;
  const Cell* cell = tables_.back().cells[static_cast<size_t>(rows)].get();
  return cell != nullptr && cell->fresh_until_ns >= now_ns;
}

void LatencyProfile::Record(int instance, int rows, int64_t duration_ns, int64_t now_ns) {
  rows = std::clamp(rows, 1, std::max(1, options_.max_rows));
  const int pooled = static_cast<int>(tables_.size()) - 1;
  if (instance >= 0 && instance < pooled) {
    AddTo(tables_[static_cast<size_t>(instance)], rows, duration_ns, now_ns);
  }
  AddTo(tables_.back(), rows, duration_ns, now_ns);
  ++recorded_;
  // The pooled curve first: every instance curve falls back on it.
  RebuildCurve(tables_.back(), nullptr);
  for (int i = 0; i < pooled; ++i) RebuildCurve(tables_[static_cast<size_t>(i)], &tables_.back());
}

void LatencyProfile::RebuildCurve(Table& table, const Table* fallback) {
  const size_t size = table.curve.size();
  const Source trusted = fallback == nullptr ? Source::kPooled : Source::kMeasured;
  if (fallback != nullptr) {
    // An instance: its own well-sampled cells, the pooled curve elsewhere.
    for (size_t rows = 1; rows < size; ++rows) {
      const Cell* cell = table.cells[rows].get();
      table.curve[rows] = cell != nullptr && cell->weight >= kMinSamples
                              ? Estimate{cell->p50_ns, cell->p99_ns, trusted}
                              : fallback->curve[rows];
    }
  } else {
    // `table` is the pooled one.
    const FitPoints points = PooledFitPoints(size - 1);
    const auto& [xs, p50s, p99s, ws] = points;
    Line p50_line, p99_line;
    const bool fitted = FitLine(xs, p50s, ws, &p50_line) && FitLine(xs, p99s, ws, &p99_line);
    for (size_t rows = 1; rows < size; ++rows) {
      const Cell* cell = table.cells[rows].get();
      Estimate& out = table.curve[rows];
      const double x = static_cast<double>(rows);
      if (cell != nullptr && cell->weight >= kMinSamples) {
        out = {cell->p50_ns, cell->p99_ns, trusted};
      } else if (fitted) {
        out = {static_cast<int64_t>(std::max(0.0, p50_line.intercept + p50_line.slope * x)),
               static_cast<int64_t>(std::max(0.0, p99_line.intercept + p99_line.slope * x)),
               Source::kFitted};
      } else if (xs.size() == 1) {
        const double scale = std::max(1.0, x / xs[0]);
        out = {static_cast<int64_t>(p50s[0] * scale), static_cast<int64_t>(p99s[0] * scale),
               Source::kScaled};
      } else {
        out = {};
      }
    }
  }
  // Never predict a bigger batch to be faster than a smaller one.
  for (size_t rows = 2; rows < size; ++rows) {
    Estimate& out = table.curve[rows];
    if (out.source == Source::kUnknown) continue;
    out.p50_ns = std::max(out.p50_ns, table.curve[rows - 1].p50_ns);
    out.p99_ns = std::max(out.p99_ns, table.curve[rows - 1].p99_ns);
  }
}

LatencyProfile::Estimate LatencyProfile::Predict(int instance, int rows) const {
  rows = std::clamp(rows, 1, std::max(1, options_.max_rows));
  const int pooled = static_cast<int>(tables_.size()) - 1;
  const Table& table =
      instance >= 0 && instance < pooled ? tables_[static_cast<size_t>(instance)] : tables_.back();
  return table.curve[static_cast<size_t>(rows)];
}

LatencyProfile::FitPoints LatencyProfile::PooledFitPoints(size_t last_rows) const {
  const Table& pooled = tables_.back();
  FitPoints points;
  for (size_t rows = 1; rows <= std::min(last_rows, pooled.cells.size() - 1); ++rows) {
    const Cell* cell = pooled.cells[rows].get();
    if (cell == nullptr || cell->weight <= 0) continue;
    points.xs.push_back(static_cast<double>(rows));
    points.p50s.push_back(static_cast<double>(cell->p50_ns));
    points.p99s.push_back(static_cast<double>(cell->p99_ns));
    points.ws.push_back(std::min(cell->weight, kMaxFitWeight));
  }
  return points;
}

std::optional<LatencyProfile::CostLine> LatencyProfile::PooledP50Line(int max_rows) const {
  const FitPoints points = PooledFitPoints(static_cast<size_t>(std::max(0, max_rows)));
  Line line;
  if (!FitLine(points.xs, points.p50s, points.ws, &line)) return std::nullopt;
  return CostLine{line.intercept, line.slope};
}

std::vector<LatencyProfile::Point> LatencyProfile::Points(int64_t now_ns) const {
  std::vector<Point> points;
  const int pooled = static_cast<int>(tables_.size()) - 1;
  auto add = [&](int t) {
    const Table& table = tables_[static_cast<size_t>(t)];
    for (size_t rows = 1; rows < table.cells.size(); ++rows) {
      const Cell* cell = table.cells[rows].get();
      if (cell == nullptr) continue;
      points.push_back({t == pooled ? -1 : t, static_cast<int>(rows),
                        cell->histogram.Weight(now_ns), cell->p50_ns, cell->p99_ns});
    }
  };
  add(pooled);
  for (int t = 0; t < pooled; ++t) add(t);
  return points;
}

}  // namespace brigade::scheduler
