#ifndef BRIGADE_SCHEDULER_P99_MODEL_POLICY_H_
#define BRIGADE_SCHEDULER_P99_MODEL_POLICY_H_

// P99ModelPolicy: picks each batch's size and wait from the online latency profile so that the
// oldest waiting request's predicted p99 completion meets its SLO, while the instances keep up
// with the arrival rate (the throughput the load needs) — and, when even that is impossible,
// runs the largest batch the SLO allows (the most throughput the SLO permits).
//
// With n candidate rows, deadline D (the earliest SLO deadline among them), p50(b)/p99(b) from
// the profile for this instance, arrival rate λ rows/s over N instances:
//
//   Bslo  = the largest b <= Bmax with now + p99(b) <= D           (the SLO's limit)
//   Bneed = the smallest b with b / p50(b) >= λ / (N · headroom)    (keeps up with arrivals)
//   Beff  = the measured b <= Bmax with the most rows per second, b / p50(b) (the largest
//           within 40%), or Bmax when no bigger measured size is clearly worse
//   Bamort(f, m) = the largest b in [f, m] up to which rows still amortize (AmortizedSize: a
//           line fitted through every size with samples; f when time is proportional to rows)
//   target = min(Bneed, Bslo, Beff), or Bamort(1, min(Bslo, Beff)) when no size keeps up
//
//   no profile yet            → run the n rows now                  (kLearning)
//   Bslo == 0 (SLO lost)      → run min(n, Bamort(1, Beff)) now     (kLate)
//   n >= target               → with cap = min(n, max(Bslo, min(Bneed, Bmax)), Beff), run
//                               Bamort(target, cap) rows now
//                               (kEnoughRows / kSloLimit / kEfficient / kNoGain): the SLO caps
//                               the batch only down to the size the load needs — below it, the
//                               oldest request would gain and every request behind it lose, and
//                               under overload the shrinking throughput would make every later
//                               request late too; nothing runs bigger than Beff, since a batch past
//                               it is slower for its own rows and serves fewer rows per second
//                               (models with a per-row cliff, e.g. a small CNN whose batch of 32
//                               leaves the cache, would otherwise collapse into ever bigger and
//                               slower batches exactly when overloaded); and within that cap the
//                               batch grows past the target only to sizes that amortize
//                               (kNoGain when it stops short of the cap):
//                               rows that lengthen a batch as much as they add only delay the
//                               rows already in it, so a model whose time is linear in rows runs
//                               one row at a time, spread over the instances;
//   n <  target               → weigh waiting for rows against running now on the idle
//                               instance (RowsWorthWaitingFor): waiting for m more rows idles
//                               it for about m / λ, and one batch of n + m rows instead of n
//                               rows now and m later saves it S(n, m) = p50(n) + p50(m) −
//                               p50(n + m) (MergeSavingNs; or the same of the p99s if less:
//                               a bigger batch's wider spread must not eat the saving). The
//                               policy waits for the largest m <= target − n with m / λ <= S:
//                               none → run the n rows now (kGreedyFlatCost: time close to
//                               proportional to rows, or rows too far apart, so a bigger batch
//                               does not pay for the idle time); otherwise until those m rows
//                               are expected, but never past D − p99(n + m) (then kSloLimit)
//                               nor past the oldest request's enqueue + min(p50(1), S(n, m))
//                               (then kDelayExpired): idling the instance longer than the
//                               merge saves costs more capacity than it buys, and the load
//                               needs Bneed rows per batch on average, not in every batch (rows
//                               queue while a batch runs, and the next batch takes them).
//
// So at low load (Bneed = 1) nothing ever waits — unlike a fixed max_queue_delay, which charges
// every request the delay — and at high load batches grow as much as the load requires, capped
// by the SLO, with a wait the profile sets. (Without the p50(1) bound, the TorchScript demo
// classifier, whose throughput curve is flat near its top, waited at 80% load for the 24 rows
// it "needed" at 85% headroom and ran a higher p50 and p99 than a 200 µs fixed delay;
// bench/results/scheduler.md.) Without the weighing, ResNet-50 on an AVX-512 CPU, where a batch
// of several rows serves barely more rows per second than single rows, waited up to p50(1) ≈ 20 ms
// for a second row at 80% load, and its p99 was 1.19× that of no batching.
// The policy is stateless: every decision is recomputed from the view.
// Thread safety: immutable.

#include <cstdint>

#include "scheduler/batch_policy.h"

namespace brigade::scheduler {

class P99ModelPolicy final : public BatchPolicy {
 public:
  struct Options {
    // The SLO: a request's p99 latency from enqueue to answer. Required (> 0).
    int64_t target_p99_us = 0;
    // Fraction of an instance's capacity the chosen batch size may plan to use (< 1 leaves room
    // for bursts and the profile's error).
    double headroom = 0.85;
    // Shortest wait between two decisions while waiting for rows (avoids spinning on a stale
    // arrival-rate estimate).
    int64_t min_wait_ns = 50'000;
  };

  explicit P99ModelPolicy(Options options) : options_(options) {}

  std::string_view name() const override { return "p99_model"; }
  BatchChoice Choose(const BatchView& view) const override;

  // The smallest batch that keeps up with `rows_per_s` arriving rows on `instances` instances,
  // from p50 service times; max_rows + 1 when no size does (overload).
  static int NeededSize(const LatencyProfile& profile, int instance, int max_rows,
                        double rows_per_s, int instances, double headroom);

  // The instance time one batch of rows + more_rows rows saves over a batch of `rows` now and one
  // of `more_rows` later: p50(rows) + p50(more_rows) − p50(rows + more_rows), or the same sum of
  // p99s when that is smaller — a saving at the median that the bigger batch's wider spread
  // (p99 − p50) eats up is not one the p99 sees. Never negative; 0 when time is proportional to
  // rows. rows + more_rows <= the profile's max_rows.
  static int64_t MergeSavingNs(const LatencyProfile& profile, int instance, int rows,
                               int more_rows);

  // What waiting buys an instance that is idle with `rows` rows queued and `missing_rows` short of
  // the batch the load wants: the largest m <= missing_rows whose expected arrival, m / rows_per_s,
  // idles the instance no longer than merging them saves (MergeSavingNs(rows, m)).
  struct WaitPlan {
    int rows = 0;           // rows worth waiting for; 0: run what is there now
    int64_t saving_ns = 0;  // MergeSavingNs for those rows: the longest the wait may idle it
  };
  static WaitPlan RowsWorthWaitingFor(const LatencyProfile& profile, int instance, int rows,
                                      int missing_rows, double rows_per_s);

  // Beff: among the sizes the profile has measured over all instances and recently (the pooled
  // cells still holding kMinSamples after decay at now_ns — so a size found slow once is tried
  // again a few half-lives later; fitted and scaled predictions do not count, nor one
  // instance's cells mixed with the pool's), the largest whose rows per second of p50 service is
  // within kEfficientTolerance of the best; max_rows when that is the largest measured size (no
  // bigger size is known to be worse) or nothing is measured. For a profile that amortizes (time =
  // a + b·rows) it is max_rows.
  static int EfficientSize(const LatencyProfile& profile, int max_rows, int64_t now_ns);
  // A bigger batch counts as worse only when it serves fewer than this share of the best rows
  // per second: measurement noise must not invent a cliff (a false one caps batches below what
  // the load needs). On the 2-core machine a 30 µs-per-row classifier's neighbouring sizes
  // differ by up to 30% from one second to the next, while the TorchScript classifier's 32-row
  // batches drop to 0.5-0.8 of the best rate; 0.6 catches the deep drops only.
  static constexpr double kEfficientTolerance = 0.6;

  // The largest size b in [floor_rows, max_rows] up to which rows still amortize: with the
  // pooled line p50(b) = fixed + per_row·b through the sizes <= max_rows (PooledP50Line), the
  // largest b whose elasticity per_row·b / p50(b) — a row's marginal cost over the average —
  // is <= kMaxElasticity. floor_rows when time is proportional to rows (fixed <= 0); max_rows
  // when fewer than two sizes have samples (nothing is known not to amortize) or a row costs
  // less than kMinSplitRowNs.
  static int AmortizedSize(const LatencyProfile& profile, int floor_rows, int max_rows);
  // Below this per-row cost batches are never split: every batch also costs the server work the
  // profile cannot see (thread wake-ups, answers handed back: tens of µs a batch on a busy
  // 2-core machine, where a 30 µs-per-row classifier serves 2.6× the rows at batch 32 as at
  // batch 1 though its measured execution time is proportional to rows).
  static constexpr int64_t kMinSplitRowNs = 1'000'000;
  // At 0.85 a batch grows while its fixed cost is still >= 18% of what its rows cost, i.e. while
  // a bigger batch still buys a noticeable share of throughput.
  static constexpr double kMaxElasticity = 0.85;

 protected:
  // From a deep queue the policy forms batches up to the size that still amortizes, below the
  // most efficient one.
  int LargestBatchRows(const LatencyProfile& profile, int max_batch_size,
                       int64_t now_ns) const override {
    return AmortizedSize(profile, 1, EfficientSize(profile, std::max(1, max_batch_size), now_ns));
  }
  // A batch short of LargestBatchRows may wait for company as Choose lets it: for the rows worth
  // waiting for, at most min(p50(1), the saving of merging them); not at all when none are
  // (Choose also stops at the SLO's last moment, which the admission check covers on its own).
  int64_t ExtraWaitNs(const AdmissionView& view, int rows) const override;

 private:
  // How long `missing_rows` more rows take to arrive at `rows_per_s`, never less than
  // min_wait_ns (0 rows/s: min_wait_ns).
  int64_t WaitForRowsNs(int missing_rows, double rows_per_s) const;

  const Options options_;
};

}  // namespace brigade::scheduler

#endif  // BRIGADE_SCHEDULER_P99_MODEL_POLICY_H_
