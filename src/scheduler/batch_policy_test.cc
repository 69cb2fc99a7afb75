#include "scheduler/batch_policy.h"

#include <algorithm>
#include <vector>

#include "gtest/gtest.h"
#include "scheduler/p99_model_policy.h"

namespace brigade::scheduler {
namespace {

constexpr int64_t kNow = 1'000'000'000;
constexpr int64_t kUs = 1000;

// A synthetic profile: a batch of b rows takes 1000 + 250 * b µs, every time. Sizes 1, 4, 8 and
// 16 are measured; the others come from the fitted line (exact here).
LatencyProfile LinearProfile(int max_rows = 16) {
  LatencyProfile profile({1, max_rows, 5'000'000'000});
  for (int rows : {1, 4, 8, 16}) {
    if (rows > max_rows) continue;
    for (int i = 0; i < 10; ++i) profile.Record(0, rows, (1000 + 250 * rows) * kUs, kNow);
  }
  return profile;
}

struct ViewBuilder {
  std::vector<int> rows;
  BatchView view;
  ViewBuilder(int requests, const LatencyProfile* profile, double rows_per_s = 0) {
    rows.assign(static_cast<size_t>(requests), 1);
    view.now_ns = kNow;
    view.instance = 0;
    view.max_batch_size = 16;
    view.request_rows = rows;
    view.rows = requests;
    view.queued_rows = requests;
    view.oldest_enqueue_ns = kNow;
    view.load.profile = profile;
    view.load.arrival_rows_per_s = rows_per_s;
    view.load.instances = 1;
  }
};

// A one-row request arriving now behind `rows_ahead` queued rows; the instances free up now.
AdmissionView OneRowBehind(int rows_ahead, const LatencyProfile* profile, int max_batch_size,
                           int instances) {
  AdmissionView view;
  view.now_ns = kNow;
  view.rows = 1;
  view.rows_ahead = rows_ahead;
  view.max_batch_size = max_batch_size;
  view.load.profile = profile;
  view.load.instances = instances;
  view.load.first_free_ns = kNow;
  return view;
}

P99ModelPolicy P99(int64_t target_us) {
  P99ModelPolicy::Options options;
  options.target_p99_us = target_us;
  return P99ModelPolicy(options);
}

TEST(P99ModelPolicyTest, NeededSizeIsTheSmallestBatchThatKeepsUpWithArrivals) {
  const LatencyProfile profile = LinearProfile();
  // 2000 rows/s at 85% headroom needs b / (1000 + 250 b) µs >= 2353/s: b = 6.
  EXPECT_EQ(P99ModelPolicy::NeededSize(profile, 0, 16, 2000, 1, 0.85), 6);
  // Two instances share the load: 4000 rows/s needs the same size.
  EXPECT_EQ(P99ModelPolicy::NeededSize(profile, 0, 16, 4000, 2, 0.85), 6);
  EXPECT_EQ(P99ModelPolicy::NeededSize(profile, 0, 16, 0, 1, 0.85), 1);
  // Beyond capacity (16 rows per 5 ms = 3200/s): no size keeps up.
  EXPECT_EQ(P99ModelPolicy::NeededSize(profile, 0, 16, 5000, 1, 0.85), 17);
}

TEST(P99ModelPolicyTest, AtLowLoadWhatIsQueuedRunsAtOnce) {
  const LatencyProfile profile = LinearProfile();
  ViewBuilder b(1, &profile, /*rows_per_s=*/10);
  b.view.slo_deadline_ns = kNow + 20'000 * kUs;
  const BatchChoice choice = P99(20'000).Choose(b.view);
  EXPECT_EQ(choice.max_rows, 1);
  EXPECT_EQ(choice.reason, BatchReason::kEnoughRows);
}

TEST(P99ModelPolicyTest, WaitsForTheRowsTheArrivalRateNeeds) {
  const LatencyProfile profile = LinearProfile();
  // 4000 rows/s over two instances needs batches of 6, as in NeededSize's test.
  ViewBuilder b(2, &profile, /*rows_per_s=*/4000);
  b.view.load.instances = 2;
  b.view.slo_deadline_ns = kNow + 20'000 * kUs;
  const BatchChoice choice = P99(20'000).Choose(b.view);
  EXPECT_EQ(choice.max_rows, 0);
  EXPECT_EQ(choice.reason, BatchReason::kWait);
  // Four more rows at 4000 rows/s: 1 ms, no longer than the 1000 µs merging them saves.
  EXPECT_EQ(choice.wake_at_ns, kNow + 1000 * kUs);
}

TEST(P99ModelPolicyTest, NoRequestWaitsForCompanyLongerThanMergingItSaves) {
  const LatencyProfile profile = LinearProfile();
  // Batches of 6 keep up with 2000 rows/s; four more rows would take 2 ms to arrive, but one
  // batch instead of two saves the instance only its fixed 1000 µs: it waits for the two rows
  // that arrive within that, and the oldest request waits no longer than 1000 µs.
  ViewBuilder b(2, &profile, /*rows_per_s=*/2000);
  b.view.slo_deadline_ns = kNow + 20'000 * kUs;
  BatchChoice choice = P99(20'000).Choose(b.view);
  EXPECT_EQ(choice.max_rows, 0);
  EXPECT_EQ(choice.wake_at_ns, kNow + 1000 * kUs);
  b.view.now_ns = choice.wake_at_ns;
  choice = P99(20'000).Choose(b.view);
  EXPECT_EQ(choice.max_rows, 2);
  EXPECT_EQ(choice.reason, BatchReason::kDelayExpired);
  // Counted from the oldest request's arrival, not from when the instance asks.
  b.view.now_ns = kNow;
  b.view.oldest_enqueue_ns = kNow - 1000 * kUs;
  choice = P99(20'000).Choose(b.view);
  EXPECT_EQ(choice.max_rows, 2);
  EXPECT_EQ(choice.reason, BatchReason::kDelayExpired);
}

TEST(P99ModelPolicyTest, RunsAtOnceWhenEnoughRowsAreQueued) {
  const LatencyProfile profile = LinearProfile();
  ViewBuilder b(7, &profile, /*rows_per_s=*/2000);
  b.view.slo_deadline_ns = kNow + 20'000 * kUs;
  const BatchChoice choice = P99(20'000).Choose(b.view);
  EXPECT_EQ(choice.max_rows, 7);
  EXPECT_EQ(choice.reason, BatchReason::kEnoughRows);
}

TEST(P99ModelPolicyTest, NeverWaitsPastTheLastMomentTheSloAllows) {
  const LatencyProfile profile = LinearProfile();
  ViewBuilder b(2, &profile, /*rows_per_s=*/2000);
  // It waits for the two rows (1 ms) whose merge saves 1000 µs; a batch of 4 takes 2000 µs: with
  // 2500 µs left it may wait 500 µs at most.
  b.view.slo_deadline_ns = kNow + 2500 * kUs;
  BatchChoice choice = P99(20'000).Choose(b.view);
  EXPECT_EQ(choice.max_rows, 0);
  EXPECT_EQ(choice.wake_at_ns, kNow + 500 * kUs);
  b.view.now_ns = choice.wake_at_ns;
  choice = P99(20'000).Choose(b.view);
  EXPECT_EQ(choice.max_rows, 2);
  EXPECT_EQ(choice.reason, BatchReason::kSloLimit);
}

TEST(P99ModelPolicyTest, CapsTheBatchAtTheSizeWhoseP99MeetsTheSlo) {
  const LatencyProfile profile = LinearProfile();
  ViewBuilder b(16, &profile, /*rows_per_s=*/2000);
  // 1000 + 250 b <= 3000 µs: b <= 8.
  b.view.slo_deadline_ns = kNow + 3000 * kUs;
  const BatchChoice choice = P99(20'000).Choose(b.view);
  EXPECT_EQ(choice.max_rows, 8);
  EXPECT_EQ(choice.reason, BatchReason::kSloLimit);
}

TEST(P99ModelPolicyTest, TheSloDoesNotCutABatchBelowWhatTheLoadNeeds) {
  const LatencyProfile profile = LinearProfile();
  // Overloaded (5000 rows/s > 3200/s capacity): a batch of 8 would meet the oldest request's SLO,
  // but only full batches keep the backlog from growing for everyone behind it.
  ViewBuilder b(16, &profile, /*rows_per_s=*/5000);
  b.view.slo_deadline_ns = kNow + 3000 * kUs;
  const BatchChoice choice = P99(20'000).Choose(b.view);
  EXPECT_EQ(choice.max_rows, 16);
  EXPECT_EQ(choice.reason, BatchReason::kEnoughRows);
}

TEST(P99ModelPolicyTest, RunsTheBiggestBatchOnceTheSloIsLost) {
  const LatencyProfile profile = LinearProfile();
  ViewBuilder b(3, &profile, /*rows_per_s=*/2000);
  b.view.slo_deadline_ns = kNow + 500 * kUs;  // even one row takes 1250 µs
  const BatchChoice choice = P99(20'000).Choose(b.view);
  EXPECT_EQ(choice.max_rows, 16);
  EXPECT_EQ(choice.reason, BatchReason::kLate);
}

TEST(P99ModelPolicyTest, TheHeadroomAloneDoesNotMakeALoadAnOverload) {
  const LatencyProfile profile = LinearProfile();
  // 3000 rows/s: at 85% headroom no size keeps up (16 rows: 3200/s), so the policy wants 16 rows,
  // but the oldest request waits no longer than merging saves (1000 µs), not the 4.7 ms that
  // fourteen more rows would take to arrive.
  ViewBuilder b(2, &profile, /*rows_per_s=*/3000);
  b.view.slo_deadline_ns = kNow + 20'000 * kUs;
  const BatchChoice choice = P99(20'000).Choose(b.view);
  EXPECT_EQ(choice.max_rows, 0);
  EXPECT_EQ(choice.wake_at_ns, kNow + 1000 * kUs);
}

TEST(P99ModelPolicyTest, UnderOverloadAnIdleInstanceWaitsOnlyAsLongAsMergingSaves) {
  const LatencyProfile profile = LinearProfile();
  ViewBuilder b(4, &profile, /*rows_per_s=*/5000);
  b.view.slo_deadline_ns = kNow + 20'000 * kUs;
  const BatchChoice choice = P99(20'000).Choose(b.view);
  EXPECT_EQ(choice.max_rows, 0);
  // No size keeps up, so the policy wants full batches; twelve more rows at 5000 rows/s would
  // idle the instance 2.4 ms to save it one batch's fixed 1000 µs. It waits for the five rows
  // that arrive within that, and a backlog fills the next batches without waiting.
  EXPECT_EQ(choice.wake_at_ns, kNow + 1000 * kUs);
}

// Every size measured: up to 12 rows a batch costs 1000 + 250 b µs (12 rows: 3000 rows/s), from
// 13 rows on it falls off a cliff to 20 ms (16 rows: 800 rows/s).
LatencyProfile CliffProfile() {
  LatencyProfile profile({1, 16, 5'000'000'000});
  for (int rows = 1; rows <= 16; ++rows) {
    const int64_t cost_us = rows <= 12 ? 1000 + 250 * rows : 20'000;
    for (int i = 0; i < 10; ++i) profile.Record(0, rows, cost_us * kUs, kNow);
  }
  return profile;
}

TEST(P99ModelPolicyTest, EfficientSizeIsTheSizeWithTheMostRowsPerSecond) {
  EXPECT_EQ(P99ModelPolicy::EfficientSize(LinearProfile(), 16, kNow), 16);
  EXPECT_EQ(P99ModelPolicy::EfficientSize(CliffProfile(), 16, kNow), 12);
  EXPECT_EQ(P99ModelPolicy::EfficientSize(LatencyProfile({1, 16, 5'000'000'000}), 16, kNow), 16);
}

TEST(P99ModelPolicyTest, EfficientSizeExcludesASizeHalfAsFastPerRow) {
  // The TorchScript demo classifier's worst shape: 32 rows serve half the rows per second that
  // 16 do; a backlog run at 32 rows would only grow.
  LatencyProfile profile({1, 32, 5'000'000'000});
  for (int i = 0; i < 10; ++i) {
    profile.Record(0, 16, 1000 * kUs, kNow);
    profile.Record(0, 32, 4000 * kUs, kNow);
  }
  EXPECT_EQ(P99ModelPolicy::EfficientSize(profile, 32, kNow), 16);
  // 30% slower per row is within what noise does to a fast model's cells: not a cliff.
  LatencyProfile noisy({1, 32, 5'000'000'000});
  for (int i = 0; i < 10; ++i) {
    noisy.Record(0, 16, 1000 * kUs, kNow);
    noisy.Record(0, 32, 2600 * kUs, kNow);
  }
  EXPECT_EQ(P99ModelPolicy::EfficientSize(noisy, 32, kNow), 32);
}

TEST(P99ModelPolicyTest, ASizeFoundSlowIsTriedAgainOnceItsSamplesHaveFaded) {
  // 10 samples with a 5 s half-life fall below 8 after 1.6 s: the verdict expires and the
  // bigger size may be formed (and measured) again.
  LatencyProfile profile({1, 32, 5'000'000'000});
  for (int i = 0; i < 10; ++i) {
    profile.Record(0, 16, 1000 * kUs, kNow);
    profile.Record(0, 32, 4000 * kUs, kNow);
  }
  EXPECT_EQ(P99ModelPolicy::EfficientSize(profile, 32, kNow + 1'500'000'000), 16);
  EXPECT_EQ(P99ModelPolicy::EfficientSize(profile, 32, kNow + 1'700'000'000), 32);
}

TEST(P99ModelPolicyTest, EfficientSizeTrustsOnlyMeasuredSizes) {
  // Sizes 1-3 amortize (1000 + 100 b µs); three slow samples of 8 rows are too few to trust as a
  // measurement, though they bend the fitted line so that every fitted size looks inefficient.
  LatencyProfile profile({1, 16, 5'000'000'000});
  for (int i = 0; i < 10; ++i) {
    for (int rows = 1; rows <= 3; ++rows) profile.Record(0, rows, (1000 + 100 * rows) * kUs, kNow);
  }
  for (int i = 0; i < 3; ++i) profile.Record(0, 8, 40'000 * kUs, kNow);
  EXPECT_EQ(profile.Predict(-1, 8).source, LatencyProfile::Source::kFitted);
  EXPECT_EQ(P99ModelPolicy::EfficientSize(profile, 16, kNow), 16);
  // Enough samples make it a measurement, and a clearly worse one: cut at the best size.
  for (int i = 0; i < 10; ++i) profile.Record(0, 8, 40'000 * kUs, kNow);
  EXPECT_EQ(P99ModelPolicy::EfficientSize(profile, 16, kNow), 3);
}

TEST(P99ModelPolicyTest, UnderOverloadABatchNeverGrowsPastTheMostEfficientSize) {
  const LatencyProfile profile = CliffProfile();
  // Overloaded and the SLO would allow 16 rows, but 16 rows serve fewer rows per second than 12.
  ViewBuilder b(16, &profile, /*rows_per_s=*/5000);
  b.view.slo_deadline_ns = kNow + 100'000 * kUs;
  const BatchChoice choice = P99(100'000).Choose(b.view);
  EXPECT_EQ(choice.max_rows, 12);
  EXPECT_EQ(choice.reason, BatchReason::kEfficient);
  // Once the SLO is lost it recovers with the most efficient size too, not the biggest.
  b.view.slo_deadline_ns = kNow + 500 * kUs;
  EXPECT_EQ(P99(100'000).Choose(b.view).max_rows, 12);
}

TEST(P99ModelPolicyTest, AdmissionPredictsTheBatchesThePolicyWillForm) {
  const LatencyProfile profile = CliffProfile();
  AdmissionView view = OneRowBehind(/*rows_ahead=*/15, &profile, /*max_batch_size=*/16,
                                    /*instances=*/1);
  // Batches of 12, each charged 4000 µs (the last, 4 rows, as a full one), not one of 16 (20 ms).
  EXPECT_EQ(P99(100'000).PredictCompletionNs(view), kNow + 8000 * kUs);
  FixedDelayPolicy fixed(/*max_queue_delay_us=*/0, {});
  EXPECT_EQ(fixed.PredictCompletionNs(view), kNow + 20'000 * kUs);
}

// A batch of b rows takes 80 ms · b (no amortization), with ±5% noise between sizes, as an
// engine whose batches cost the same per image at every size; sizes 1-8 are measured.
LatencyProfile ProportionalProfile() {
  LatencyProfile profile({1, 8, 5'000'000'000});
  constexpr double kNoise[] = {0, 1.00, 0.96, 1.05, 0.97, 1.02, 0.95, 1.04, 0.98};
  for (int rows = 1; rows <= 8; ++rows) {
    const auto cost_ns = static_cast<int64_t>(80'000 * kUs * rows * kNoise[rows]);
    for (int i = 0; i < 10; ++i) profile.Record(0, rows, cost_ns, kNow);
  }
  return profile;
}

// A batch of b rows takes fixed_ms + per_row_ms · b, every time; sizes 1-32 measured.
LatencyProfile AffineProfile(double fixed_ms, double per_row_ms) {
  LatencyProfile profile({1, 32, 5'000'000'000});
  for (int rows = 1; rows <= 32; ++rows) {
    const auto cost_ns = static_cast<int64_t>((fixed_ms + per_row_ms * rows) * 1e6);
    for (int i = 0; i < 10; ++i) profile.Record(0, rows, cost_ns, kNow);
  }
  return profile;
}

TEST(P99ModelPolicyTest, AmortizedSizeGrowsOnlyWhileTimeGrowsSlowerThanRows) {
  // 40 + 2 b ms: the 113th row would be the first whose marginal cost exceeds 85% of the
  // average, so the whole range, from any floor.
  EXPECT_EQ(P99ModelPolicy::AmortizedSize(AffineProfile(40, 2), 1, 32), 32);
  EXPECT_EQ(P99ModelPolicy::AmortizedSize(AffineProfile(40, 2), 6, 7), 7);
  // 4 + 1 b ms: up to b = 22 (5.67 · 4 / 1).
  EXPECT_EQ(P99ModelPolicy::AmortizedSize(AffineProfile(4, 1), 1, 32), 22);
  EXPECT_EQ(P99ModelPolicy::AmortizedSize(AffineProfile(4, 1), 25, 32), 25);
  // Time proportional to rows (through ±5% noise): nothing past the floor.
  EXPECT_EQ(P99ModelPolicy::AmortizedSize(ProportionalProfile(), 1, 8), 1);
  EXPECT_EQ(P99ModelPolicy::AmortizedSize(ProportionalProfile(), 3, 8), 3);
  // Rows cheaper than kMinSplitRowNs always join, proportional or not.
  EXPECT_EQ(P99ModelPolicy::AmortizedSize(AffineProfile(0, 0.03), 1, 32), 32);
  // Fewer than two sizes measured: the whole range.
  EXPECT_EQ(P99ModelPolicy::AmortizedSize(LatencyProfile({1, 16, 5'000'000'000}), 1, 16), 16);
}

TEST(P99ModelPolicyTest, AmortizedSizeReadsTheSlopeFromSizesWithFewSamples) {
  // What a policy that mostly runs single rows sees of a 78 ms-per-row model: size 1 well
  // measured, sizes 2-5 once each — too few to trust one by one, together a clear slope.
  LatencyProfile profile({1, 8, 5'000'000'000});
  for (int i = 0; i < 90; ++i) profile.Record(0, 1, 78'000 * kUs, kNow);
  const int64_t once_us[] = {0, 0, 150'000, 226'000, 295'000, 377'000};
  for (int rows = 2; rows <= 5; ++rows) profile.Record(1, rows, once_us[rows] * kUs, kNow);
  EXPECT_EQ(profile.Predict(-1, 3).source, LatencyProfile::Source::kFitted);
  EXPECT_EQ(P99ModelPolicy::AmortizedSize(profile, 1, 8), 1);
}

TEST(P99ModelPolicyTest, ABacklogOfAModelThatDoesNotAmortizeRunsOneRowPerBatch) {
  const LatencyProfile profile = ProportionalProfile();
  // 6 rows queued at 10 rows/s on 2 instances (one row keeps up): a batch of 6 would hold the
  // oldest request for 480 ms to save nothing; one row goes, the next to the other instance.
  ViewBuilder b(6, &profile, /*rows_per_s=*/10);
  b.view.max_batch_size = 8;
  b.view.load.instances = 2;
  b.view.slo_deadline_ns = kNow + 2'000'000 * kUs;
  BatchChoice choice = P99(2'000'000).Choose(b.view);
  EXPECT_EQ(choice.max_rows, 1);
  EXPECT_EQ(choice.reason, BatchReason::kNoGain);
  // Overloaded (no size keeps up): the same — bigger batches would not serve more rows.
  b.view.load.arrival_rows_per_s = 100;
  choice = P99(2'000'000).Choose(b.view);
  EXPECT_EQ(choice.max_rows, 1);
  EXPECT_EQ(choice.reason, BatchReason::kNoGain);
}

TEST(P99ModelPolicyTest, DrainingFlushesInBatchesThatStillAmortize) {
  ViewBuilder b(6, nullptr);
  b.view.max_batch_size = 8;
  b.view.flush = true;
  EXPECT_EQ(P99(500'000).Choose(b.view).max_rows, 8);  // no profile: everything at once
  const LatencyProfile proportional = ProportionalProfile();
  b.view.load.profile = &proportional;
  BatchChoice choice = P99(500'000).Choose(b.view);
  EXPECT_EQ(choice.max_rows, 1);
  EXPECT_EQ(choice.reason, BatchReason::kFlush);
  const LatencyProfile linear = LinearProfile();
  b.view.load.profile = &linear;
  EXPECT_EQ(P99(500'000).Choose(b.view).max_rows, 8);
}

// A batch of b rows takes fixed_us + per_row_us · b, every time; sizes 1..max_rows measured.
LatencyProfile CostProfile(double fixed_us, double per_row_us, int max_rows) {
  LatencyProfile profile({1, max_rows, 5'000'000'000});
  for (int rows = 1; rows <= max_rows; ++rows) {
    const auto cost_ns = static_cast<int64_t>((fixed_us + per_row_us * rows) * 1e3);
    for (int i = 0; i < 10; ++i) profile.Record(0, rows, cost_ns, kNow);
  }
  return profile;
}

// One instance serving single-row requests that arrive every `gap_ns` from kNow, driven by
// `policy` on a fixed profile whose batches take `cost_ns(rows)`; time is simulated (no clock,
// no threads). Records what an idle instance was told and what each request waited.
struct Simulation {
  int batches = 0;
  int rows = 0;
  int waits = 0;  // decisions that held rows back with the instance idle
  int64_t max_latency_ns = 0;
  double mean_batch() const { return batches > 0 ? static_cast<double>(rows) / batches : 0; }
};
template <typename CostFn>
Simulation Simulate(const BatchPolicy& policy, const LatencyProfile& profile, CostFn cost_ns,
                    int max_batch_size, int64_t gap_ns, int requests, int64_t slo_ns) {
  Simulation result;
  std::vector<int64_t> arrivals(static_cast<size_t>(requests));
  for (size_t i = 0; i < arrivals.size(); ++i) {
    arrivals[i] = kNow + static_cast<int64_t>(i) * gap_ns;
  }
  size_t next = 0;  // first request not yet run
  int64_t now = kNow;
  const double rows_per_s = 1e9 / static_cast<double>(gap_ns);
  while (next < arrivals.size()) {
    now = std::max(now, arrivals[next]);
    size_t queued = next;
    while (queued < arrivals.size() && arrivals[queued] <= now) ++queued;
    const int n = static_cast<int>(std::min<size_t>(queued - next, max_batch_size));
    std::vector<int> rows(static_cast<size_t>(n), 1);
    BatchView view;
    view.now_ns = now;
    view.instance = 0;
    view.max_batch_size = max_batch_size;
    view.request_rows = rows;
    view.rows = n;
    view.queued_rows = static_cast<int>(queued - next);
    view.oldest_enqueue_ns = arrivals[next];
    view.slo_deadline_ns = arrivals[next] + slo_ns;
    view.load.profile = &profile;
    view.load.arrival_rows_per_s = rows_per_s;
    view.load.instances = 1;
    view.load.first_free_ns = now;
    const BatchChoice choice = policy.Choose(view);
    if (choice.max_rows == 0) {
      ++result.waits;
      // Decide again when asked to, or when the next request arrives, whichever is first.
      int64_t wake = choice.wake_at_ns;
      if (queued < arrivals.size()) wake = std::min(wake, arrivals[queued]);
      now = std::max(now + 1, wake);
      continue;
    }
    const int run = std::min(n, choice.max_rows);
    const int64_t done = now + cost_ns(run);
    for (int i = 0; i < run; ++i) {
      result.max_latency_ns = std::max(result.max_latency_ns, done - arrivals[next]);
      ++next;
    }
    ++result.batches;
    result.rows += run;
    now = done;
  }
  return result;
}

TEST(P99ModelPolicyTest, AModelWhosePerRowCostIsFlatGetsGreedyDispatch) {
  // ResNet-50 as an AVX-512 CPU runs it: 2 ms a batch and 18 ms a row, so 8 rows serve 1.10× the
  // rows per second of one. At 80% of the full-batch capacity (8 rows per 146 ms: 43.8 rows/s,
  // a row every 22.8 ms) a second row would idle the instance 22.8 ms to save it 2 ms.
  const LatencyProfile profile = CostProfile(2'000, 18'000, 8);
  ViewBuilder b(1, &profile, /*rows_per_s=*/43.8);
  b.view.max_batch_size = 8;
  b.view.slo_deadline_ns = kNow + 500'000 * kUs;
  const BatchChoice choice = P99(500'000).Choose(b.view);
  EXPECT_EQ(choice.max_rows, 1);
  EXPECT_EQ(choice.reason, BatchReason::kGreedyFlatCost);
  // Time exactly proportional to rows: nothing to save, whatever the load.
  const LatencyProfile proportional = CostProfile(0, 20'000, 8);
  b.view.load.profile = &proportional;
  for (double rows_per_s : {25.0, 45.0, 60.0}) {
    b.view.load.arrival_rows_per_s = rows_per_s;
    EXPECT_GT(P99(500'000).Choose(b.view).max_rows, 0) << rows_per_s << " rows/s";
  }
}

TEST(P99ModelPolicyTest, NeverWaitsWithAnIdleInstanceWhenBatchingDoesNotPay) {
  // The same model under steady arrivals at 80% of its full-batch capacity: every decision an
  // idle instance asks for runs what is queued.
  const LatencyProfile profile = CostProfile(2'000, 18'000, 8);
  const auto cost_ns = [](int rows) { return (2'000 + 18'000 * rows) * kUs; };
  const Simulation run = Simulate(P99(500'000), profile, cost_ns, /*max_batch_size=*/8,
                                  /*gap_ns=*/22'800 * kUs, /*requests=*/400, 500'000 * kUs);
  EXPECT_EQ(run.waits, 0);
  EXPECT_EQ(run.rows, 400);
  // Nothing waits for company, so no request takes longer than a batch of one row does behind
  // the one running when it arrived.
  EXPECT_LE(run.max_latency_ns, 2 * cost_ns(1));
}

TEST(P99ModelPolicyTest, AModelWithALargePerBatchCostGetsBatchesUnderSteadyArrivals) {
  // 5 ms a batch and 20 µs a row: 32 rows serve 28× the rows per second of one. A row every
  // 250 µs (4000 rows/s, 71% of the 32-row capacity) is far beyond what single rows serve
  // (200/s), and the rows waited for arrive well within the 5 ms each merge saves.
  const LatencyProfile profile = CostProfile(5'000, 20, 32);
  const auto cost_ns = [](int rows) { return (5'000 + 20 * rows) * kUs; };
  const Simulation run = Simulate(P99(20'000), profile, cost_ns, /*max_batch_size=*/32,
                                  /*gap_ns=*/250 * kUs, /*requests=*/2000, 20'000 * kUs);
  EXPECT_EQ(run.rows, 2000);
  EXPECT_GE(run.mean_batch(), 15);
  EXPECT_LE(run.max_latency_ns, 20'000 * kUs);
  // Greedy dispatch (no waiting at all) also forms batches here, from the rows that queue while
  // one runs; the waits the policy adds must not make it worse for the oldest request.
  const FixedDelayPolicy greedy(/*max_queue_delay_us=*/0, {});
  const Simulation baseline = Simulate(greedy, profile, cost_ns, 32, 250 * kUs, 2000, 20'000 * kUs);
  EXPECT_LE(run.max_latency_ns, baseline.max_latency_ns + cost_ns(1));
}

TEST(P99ModelPolicyTest, AnSloCloseToTheServiceTimeCapsTheWait) {
  // 5 ms a batch and 20 µs a row at 4100 rows/s: the load wants 27 rows, and 20 more arrive
  // within the 5 ms their merge saves; but a batch of 21 takes 5420 µs, and with 6000 µs to the
  // deadline the oldest request may wait 580 µs at most.
  const LatencyProfile profile = CostProfile(5'000, 20, 32);
  ViewBuilder b(1, &profile, /*rows_per_s=*/4100);
  b.view.max_batch_size = 32;
  b.view.slo_deadline_ns = kNow + 6'000 * kUs;
  BatchChoice choice = P99(6'000).Choose(b.view);
  EXPECT_EQ(choice.max_rows, 0);
  EXPECT_EQ(choice.wake_at_ns, kNow + 580 * kUs);
  // At that moment what is there runs, because of the SLO.
  b.view.now_ns = choice.wake_at_ns;
  choice = P99(6'000).Choose(b.view);
  EXPECT_EQ(choice.max_rows, 1);
  EXPECT_EQ(choice.reason, BatchReason::kSloLimit);
}

TEST(P99ModelPolicyTest, AMergeSavesOnlyWhatItSavesAtTheMedianAndAtTheTail) {
  EXPECT_EQ(P99ModelPolicy::MergeSavingNs(CostProfile(5'000, 20, 32), 0, 4, 6), 5'000 * kUs);
  EXPECT_EQ(P99ModelPolicy::MergeSavingNs(CostProfile(0, 20'000, 8), 0, 1, 1), 0);
  // Batches of 2 save 4.5 ms at the median over two of 1, but their tail is 14.5 ms wider: at
  // the p99 one batch of 2 takes longer than two of 1.
  LatencyProfile profile({1, 2, 5'000'000'000});
  for (int i = 0; i < 10; ++i) profile.Record(0, 1, 5'000 * kUs, kNow);
  for (int i = 0; i < 9; ++i) profile.Record(0, 2, 5'500 * kUs, kNow);
  profile.Record(0, 2, 20'000 * kUs, kNow);
  ASSERT_GT(profile.Predict(0, 2).p99_ns, 2 * profile.Predict(0, 1).p99_ns);
  EXPECT_EQ(P99ModelPolicy::MergeSavingNs(profile, 0, 1, 1), 0);
  const P99ModelPolicy::WaitPlan plan =
      P99ModelPolicy::RowsWorthWaitingFor(profile, 0, 1, 1, /*rows_per_s=*/10'000);
  EXPECT_EQ(plan.rows, 0);
  // A stall that hits every size alike widens every tail and leaves the median's saving.
  LatencyProfile stalled({1, 2, 5'000'000'000});
  for (int i = 0; i < 9; ++i) {
    stalled.Record(0, 1, 5'000 * kUs, kNow);
    stalled.Record(0, 2, 5'500 * kUs, kNow);
  }
  stalled.Record(0, 1, 25'000 * kUs, kNow);
  stalled.Record(0, 2, 25'500 * kUs, kNow);
  EXPECT_EQ(P99ModelPolicy::MergeSavingNs(stalled, 0, 1, 1), 4'500 * kUs);
}

TEST(P99ModelPolicyTest, WithoutAProfileItRunsWhatIsThere) {
  const LatencyProfile profile({1, 16, 5'000'000'000});
  ViewBuilder b(3, &profile, /*rows_per_s=*/2000);
  const BatchChoice choice = P99(20'000).Choose(b.view);
  EXPECT_EQ(choice.max_rows, 3);
  EXPECT_EQ(choice.reason, BatchReason::kLearning);
}

TEST(QueueFormulaPolicyTest, SizeIsQueuedRowsOverOnePlusLoad) {
  const LatencyProfile profile = LinearProfile();
  QueueFormulaPolicy formula(/*target_p99_us=*/0);
  ViewBuilder b(10, &profile);
  b.view.max_batch_size = 8;
  b.view.load.utilization = 0;
  EXPECT_EQ(formula.Choose(b.view).max_rows, 8);  // min(Bmax, 10)
  b.view.load.utilization = 1;
  EXPECT_EQ(formula.Choose(b.view).max_rows, 5);
  b.view.queued_rows = 3;
  b.view.load.utilization = 0.5;
  EXPECT_EQ(formula.Choose(b.view).max_rows, 2);  // ceil(3 / 1.5)
  EXPECT_EQ(formula.Choose(b.view).reason, BatchReason::kFormula);
}

TEST(QueueFormulaPolicyTest, TheSloCapsBmaxThroughTheProfile) {
  const LatencyProfile profile = LinearProfile();
  QueueFormulaPolicy formula(/*target_p99_us=*/2000);  // 1000 + 250 b <= 2000: b <= 4
  ViewBuilder b(10, &profile);
  EXPECT_EQ(formula.Choose(b.view).max_rows, 4);
}

TEST(FixedDelayPolicyTest, APartialBatchWaitsForTheOldestRequestsDelay) {
  FixedDelayPolicy fixed(/*max_queue_delay_us=*/300, {});
  ViewBuilder b(2, nullptr);
  b.view.oldest_enqueue_ns = kNow - 100 * kUs;
  BatchChoice choice = fixed.Choose(b.view);
  EXPECT_EQ(choice.max_rows, 0);
  EXPECT_EQ(choice.wake_at_ns, kNow + 200 * kUs);
  b.view.now_ns = choice.wake_at_ns;
  choice = fixed.Choose(b.view);
  EXPECT_EQ(choice.max_rows, 2);
  EXPECT_EQ(choice.reason, BatchReason::kDelayExpired);
}

TEST(BatchPolicyTest, PredictedCompletionChargesQueuedBatchesAndTheFixedDelay) {
  const LatencyProfile profile = LinearProfile();
  AdmissionView view = OneRowBehind(/*rows_ahead=*/20, &profile, /*max_batch_size=*/8,
                                    /*instances=*/2);
  view.load.busy_instances = 2;
  view.load.first_free_ns = kNow + 700 * kUs;
  // 21 rows: 3 batches of 8 (3000 µs) on 2 instances = 2 rounds, after the first instance frees.
  const int64_t expected = kNow + 700 * kUs + 3000 * kUs + 3000 * kUs;
  EXPECT_EQ(P99(20'000).PredictCompletionNs(view), expected);
  // The instances free up at different times: batches go to whichever is first.
  view.load.free_at_ns = {kNow + 700 * kUs, kNow + 6000 * kUs};
  // Batch 1 on A (700 → 3700), batch 2 on A (3700 → 6700), the own batch on B at 6000.
  EXPECT_EQ(P99(20'000).PredictCompletionNs(view), kNow + 6000 * kUs + 3000 * kUs);
  view.load.free_at_ns.clear();
  // A fixed delay holds a partial batch back: 3 rows of 16 wait the delay, then take 1750 µs.
  view.rows_ahead = 2;
  view.max_batch_size = 16;
  FixedDelayPolicy fixed(/*max_queue_delay_us=*/500, {});
  EXPECT_EQ(fixed.PredictCompletionNs(view), kNow + 700 * kUs + 1750 * kUs + 500 * kUs);
  view.load.profile = nullptr;
  EXPECT_EQ(fixed.PredictCompletionNs(view), -1);
}

TEST(BatchPolicyTest, ThePredictionChargesTheP99ModelsWaitForCompanyToAPartialBatch) {
  const LatencyProfile profile = LinearProfile();  // 1000 + 250 b µs; 16 rows amortize
  AdmissionView view = OneRowBehind(/*rows_ahead=*/2, &profile, /*max_batch_size=*/16,
                                    /*instances=*/1);
  // At 100 rows/s the next row is 10 ms away, and merging it saves the instance 1000 µs: a
  // partial batch (3 of 16 rows) does not wait, it takes 1750 µs.
  view.load.arrival_rows_per_s = 100;
  EXPECT_EQ(P99(20'000).PredictCompletionNs(view), kNow + 1750 * kUs);
  // At 2000 rows/s two more rows arrive within the 1000 µs their merge saves: it waits 1000 µs.
  view.load.arrival_rows_per_s = 2000;
  EXPECT_EQ(P99(20'000).PredictCompletionNs(view), kNow + 1750 * kUs + 1000 * kUs);
  // Overloaded (10000 rows/s > 16 rows per 5 ms): the 13 rows it lacks arrive in 1300 µs, but the
  // wait stops at the 1000 µs the merge saves.
  view.load.arrival_rows_per_s = 10'000;
  EXPECT_EQ(P99(20'000).PredictCompletionNs(view), kNow + 1750 * kUs + 1000 * kUs);
  // A full batch does not wait.
  view.rows_ahead = 15;
  EXPECT_EQ(P99(20'000).PredictCompletionNs(view), kNow + 5000 * kUs);
}

}  // namespace
}  // namespace brigade::scheduler
