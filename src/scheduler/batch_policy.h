#ifndef BRIGADE_SCHEDULER_BATCH_POLICY_H_
#define BRIGADE_SCHEDULER_BATCH_POLICY_H_

// BatchPolicy: the rule that decides, when an idle instance asks for work, how many of the
// queued rows to run now — or how long to wait for more — and, for admission control, when a
// newly arriving request would be answered.
//
// The BatchQueue does everything that is not a choice (priorities, shape compatibility, the
// row limit, timeouts, cancellation) and shows the policy the batch it *could* form now as a
// BatchView; the policy answers with a BatchChoice. Policies are pure functions of the view (no
// clock, no threads, no mutable state), so each is unit-tested on synthetic views and profiles.
//
//   FixedDelayPolicy    Triton's dynamic batcher: full or preferred sizes leave at once,
//                       otherwise wait until the oldest request has waited max_queue_delay.
//   QueueFormulaPolicy  a queue-length controller: B = min(Bmax, ceil(Q / (1 + L))) released at
//   once,
//                       Q = queued rows, L = instance utilization (0..1), Bmax = the largest size
//                       whose predicted p99 fits the SLO.
//   P99ModelPolicy      (p99_model_policy.h) size and wait from the latency profile so the
//                       oldest request's predicted p99 completion meets its SLO, waiting for
//                       rows only when the bigger batch saves more than the wait idles.
//
// Thread safety: implementations are immutable; Choose/PredictCompletionNs are const and may be
// called from any thread.

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "scheduler/load_tracker.h"

namespace brigade::scheduler {

// Why a batch left (or why nothing did); one counter per value in the scheduler's snapshot.
enum class BatchReason : uint8_t {
  kWait = 0,      // nothing released; wake_at_ns says when to ask again
  kNoBatching,    // the model does not batch: one request per execution
  kFull,          // the batch reached max_batch_size rows
  kPreferred,     // the batch is exactly a preferred size
  kDelayExpired,  // the oldest request waited max_queue_delay (P99 model: as long as merging
                  // the rows it waits for saves, at most as long as a batch of one row takes)
  kFlush,         // draining: everything goes without waiting
  kFormula,       // QueueFormulaPolicy's size
  kLearning,      // no latency profile yet: take what is there
  kEnoughRows,    // P99 model: the batch is big enough to keep up with arrivals
  kSloLimit,      // P99 model: waiting longer (or a bigger batch) would break the SLO
  kLate,          // P99 model: the SLO is lost already; run the most efficient batch to recover
  kEfficient,     // P99 model: cut to the size with the most rows per second (bigger is slower)
  kNoGain,        // P99 model: more rows would lengthen the batch as much as they add (no
                  // amortization), so they are left to the next batch or the next free instance
  // P99 model: the batch the load wants is short of rows, but waiting for them would idle the
  // instance longer than the bigger batch saves (time close to proportional to rows, or rows too
  // far apart): what is there runs now.
  kGreedyFlatCost,
};
inline constexpr int kNumBatchReasons = 14;
std::string_view BatchReasonName(BatchReason reason);

// The batch the queue could form now, and the load around it.
struct BatchView {
  int64_t now_ns = 0;
  // The instance that will run the batch.
  int instance = -1;
  // Row limit of one batch (the model's, lowered by an adaptive cap).
  int max_batch_size = 1;
  // Rows of each candidate request, in the order they would join the batch (priority, then
  // arrival); all compatible with the first, and their sum (`rows`) within max_batch_size.
  std::span<const int> request_rows;
  int rows = 0;
  // Earliest enqueue time among the candidates.
  int64_t oldest_enqueue_ns = 0;
  // Earliest SLO deadline among the candidates: their own deadline (under a REJECT policy) or
  // enqueue + target p99, whichever is earlier. INT64_MAX when none has one.
  int64_t slo_deadline_ns = INT64_MAX;
  // All rows queued, every level and shape.
  int queued_rows = 0;
  // Draining: release without waiting.
  bool flush = false;
  LoadSignals load;
};

struct BatchChoice {
  // Release a batch of at most this many rows now (the longest candidate prefix that fits, and
  // never less than the first request); 0 = release nothing yet.
  int max_rows = 0;
  // With max_rows == 0: when to decide again (INT64_MAX = when something arrives).
  int64_t wake_at_ns = INT64_MAX;
  BatchReason reason = BatchReason::kWait;
};

// A request about to be admitted, and the work ahead of it.
struct AdmissionView {
  int64_t now_ns = 0;
  int rows = 1;
  // Rows queued at the request's priority level and above (they run before it).
  int rows_ahead = 0;
  int max_batch_size = 1;
  LoadSignals load;
};

class BatchPolicy {
 public:
  virtual ~BatchPolicy() = default;

  virtual std::string_view name() const = 0;

  // Called with at least one candidate (view.rows >= 1).
  virtual BatchChoice Choose(const BatchView& view) const = 0;

  // The predicted p99 completion time (absolute, Clock ns) of the request in `view`: the rows
  // ahead and the request's own rows go in FIFO batches of up to LargestBatchRows (normally
  // max_batch_size), each to the instance that frees up first (after the batch it runs now);
  // every batch is charged its p99 (conservative: the p99 of a sum is at most the sum of p99s),
  // plus ExtraWaitNs for batch formation.
  // -1 when the profile cannot tell yet (admission control then admits).
  int64_t PredictCompletionNs(const AdmissionView& view) const;

 protected:
  // Time the policy may hold back a batch whose queue holds `rows` rows in all (the request's
  // and those ahead of it) to let it grow: a fixed delay, or the P99 model's wait for company.
  // view.load.profile is set.
  virtual int64_t ExtraWaitNs(const AdmissionView& view, int rows) const {
    (void)view;
    (void)rows;
    return 0;
  }
  // The largest batch the policy forms from a deep queue, for the prediction.
  virtual int LargestBatchRows(const LatencyProfile& profile, int max_batch_size,
                               int64_t now_ns) const {
    (void)profile;
    (void)now_ns;
    return max_batch_size;
  }
};

// Triton's dynamic batcher rule (see batch_queue.h for the semantics it is tested against).
class FixedDelayPolicy final : public BatchPolicy {
 public:
  FixedDelayPolicy(int64_t max_queue_delay_us, std::vector<int> preferred_batch_sizes);
  std::string_view name() const override { return "fixed_delay"; }
  BatchChoice Choose(const BatchView& view) const override;

 protected:
  int64_t ExtraWaitNs(const AdmissionView& view, int rows) const override;

 private:
  const int64_t delay_ns_;
  const std::vector<int> preferred_;
};

// B = min(Bmax, ceil(Q / (1 + L))), released at once. With a target p99, Bmax is the largest
// size whose predicted p99 fits it (at least 1); otherwise the row limit.
class QueueFormulaPolicy final : public BatchPolicy {
 public:
  explicit QueueFormulaPolicy(int64_t target_p99_us);
  std::string_view name() const override { return "queue_formula"; }
  BatchChoice Choose(const BatchView& view) const override;

 private:
  const int64_t target_p99_ns_;
};

// Largest b in [1, max_rows] with profile p99(b) <= budget_ns on `instance`; 0 when even one row
// does not fit. With an empty profile, max_rows (nothing is known to be too slow).
int LargestSizeWithin(const LatencyProfile& profile, int instance, int max_rows, int64_t budget_ns);

}  // namespace brigade::scheduler

#endif  // BRIGADE_SCHEDULER_BATCH_POLICY_H_
