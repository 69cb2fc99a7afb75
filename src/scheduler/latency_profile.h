#ifndef BRIGADE_SCHEDULER_LATENCY_PROFILE_H_
#define BRIGADE_SCHEDULER_LATENCY_PROFILE_H_

// LatencyProfile: what a batch of a given size costs on a given instance, learnt online from every
// executed batch. It is the model the adaptive batch policies and admission control predict with.
//
// For each (instance, batch rows) it keeps a DecayingHistogram of batch service times (the time
// the instance was occupied by the batch: from when it was free to take it — the lock waits and
// the decision — through gather, execute, scatter and answer), whose counts halve
// every `half_life_ns`, so the p50/p99 it reports describe the recent past (a decaying window)
// and follow a model that slows down or speeds up. A pooled histogram per batch size merges all
// instances.
//
// Predict(instance, rows) answers from, in order of preference:
//   kMeasured  this instance's own histogram at `rows`, when it holds >= kMinSamples samples;
//   kPooled    the all-instance histogram at `rows`, when it holds >= kMinSamples samples;
//   kFitted    a weighted least-squares line time = a + b * rows through the sizes measured so
//              far (per quantile), once two distinct sizes have samples;
//   kScaled    with a single measured size s: time(s) * rows / s above it (no amortization
//              assumed) and time(s) below it (no saving assumed) — pessimistic on purpose;
//   kUnknown   nothing measured yet (p50_ns = p99_ns = 0).
// Predictions never decrease with the number of rows (a bigger batch is not assumed faster).
//
// Cost: Record() is O(buckets + max_rows) (the quantiles' pass); Predict() is O(1) (the curves are
// rebuilt on Record). Thread safety: none; the owner serializes access (the Scheduler holds its
// lock).

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "absl/container/inlined_vector.h"
namespace brigade::scheduler {

// A histogram of durations on log-spaced buckets (ratio 1.15 from 1 µs to ~100 s, values outside
// clamp to the end buckets) whose counts decay exponentially with age. Each bucket also keeps the
// smallest and largest value it received, and quantiles interpolate between those, so they are
// exact for a constant duration and within a bucket's width (15%) otherwise.
class DecayingHistogram {
 public:
  explicit DecayingHistogram(int64_t half_life_ns) : half_life_ns_(half_life_ns) {}

  void Add(int64_t value_ns, int64_t now_ns);
  // Effective number of samples at `now_ns` (sum of decayed counts).
  double Weight(int64_t now_ns) const;
  // The q-quantile (0 < q < 1) in ns; 0 when empty. Decay scales every count alike, so the
  // quantiles do not depend on the time they are read at.
  int64_t Quantile(double q) const;
  // Quantile(qs[i]) into out[i] for ascending `qs`, in one pass over the buckets (the profile
  // reads p50 and p99 after every batch).
  void Quantiles(std::span<const double> qs, std::span<int64_t> out) const;

  static constexpr int kBuckets = 133;

 private:
  // Decay multiplies every count alike, so it is kept as one factor (`scale_`: a count's value is
  // counts_[b] * scale_) and folded into the counts only when it gets small: Add is O(1) but
  // for that fold, instead of a pass over every bucket per sample.
  static constexpr double kRescaleBelow = 1e-3;
  void DecayTo(int64_t now_ns);

  int64_t half_life_ns_;
  int64_t last_ns_ = 0;
  double scale_ = 1;
  double total_ = 0;  // in stored units, as counts_
  std::array<float, kBuckets> counts_{};
  std::array<int64_t, kBuckets> min_ns_{};
  std::array<int64_t, kBuckets> max_ns_{};
};

class LatencyProfile {
 public:
  // Samples a histogram needs before its quantiles are trusted for prediction.
  static constexpr double kMinSamples = 8;

  struct Options {
    int instances = 1;
    // Largest batch, in rows, ever recorded or predicted (larger values are clamped).
    int max_rows = 1;
    // Age at which a sample counts half.
    int64_t half_life_ns = 5'000'000'000;
  };

  enum class Source { kUnknown, kScaled, kFitted, kPooled, kMeasured };
  static std::string_view SourceName(Source source);

  struct Estimate {
    int64_t p50_ns = 0;
    int64_t p99_ns = 0;
    Source source = Source::kUnknown;
  };

  // One measured (instance, rows) cell, for snapshots. instance == -1 is the pooled row.
  struct Point {
    int instance = -1;
    int rows = 0;
    double samples = 0;
    int64_t p50_ns = 0;
    int64_t p99_ns = 0;
  };

  explicit LatencyProfile(Options options);

  // One executed batch of `rows` rows that kept `instance` busy for `duration_ns`.
  void Record(int instance, int rows, int64_t duration_ns, int64_t now_ns);

  // Predicted p50/p99 service time of a batch of `rows` rows on `instance` (see the header).
  // `instance` out of range (e.g. -1) predicts from the pooled curve.
  Estimate Predict(int instance, int rows) const;

  // True when the pooled cell at `rows` holds >= kMinSamples samples at `now_ns` after decay: a
  // current measurement. (Predict keeps trusting a cell that once had them, so a size the policy
  // stopped forming still predicts; a caller that excludes sizes for being slow must not rely
  // on an old verdict forever, or a slow spell during warm-up caps batches for good.)
  bool FreshlyMeasured(int rows, int64_t now_ns) const;

  // True once anything was recorded.
  bool empty() const { return recorded_ == 0; }
  int max_rows() const { return options_.max_rows; }
  int instances() const { return options_.instances; }

  // Every cell that holds samples, pooled rows (instance -1) first, ascending rows.
  std::vector<Point> Points(int64_t now_ns) const;

  // A pooled p50 line p50 ≈ fixed_ns + per_row_ns · rows through the sizes up to `max_rows` that
  // have samples: the kFitted curve's fit (weights capped, slope never negative) restricted to
  // those sizes; nullopt while fewer than two such sizes have samples. O(max_rows); allocates
  // nothing up to 64 sizes.
  struct CostLine {
    double fixed_ns = 0;
    double per_row_ns = 0;
  };
  std::optional<CostLine> PooledP50Line(int max_rows) const;

 private:
  struct Cell {
    DecayingHistogram histogram;
    int64_t p50_ns = 0;
    int64_t p99_ns = 0;
    double weight = 0;  // as of the cell's last Record
    // Until when the decayed weight stays >= kMinSamples (-1: it never reached it).
    int64_t fresh_until_ns = -1;
  };
  // Per instance (index instances = pooled): cells by rows (lazily created) and the curve.
  struct Table {
    std::vector<std::unique_ptr<Cell>> cells;  // index = rows, 0 unused
    std::vector<Estimate> curve;               // index = rows, 0 unused
  };

  // Regression points of the pooled cells up to `last_rows` that hold samples: rows, p50, p99
  // and weight (the sample count, capped).
  struct FitPoints {
    absl::InlinedVector<double, 64> xs, p50s, p99s, ws;
  };
  FitPoints PooledFitPoints(size_t last_rows) const;

  void AddTo(Table& table, int rows, int64_t duration_ns, int64_t now_ns);
  void RebuildCurve(Table& table, const Table* fallback);

  const Options options_;
  std::vector<Table> tables_;  // size instances + 1; the last is pooled
  uint64_t recorded_ = 0;
};

}  // namespace brigade::scheduler

#endif  // BRIGADE_SCHEDULER_LATENCY_PROFILE_H_
