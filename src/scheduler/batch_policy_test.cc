#include "scheduler/batch_policy.h"

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
  // Four more rows at 4000 rows/s: 1 ms.
  EXPECT_EQ(choice.wake_at_ns, kNow + 1000 * kUs);
}

TEST(P99ModelPolicyTest, NoRequestWaitsForCompanyLongerThanABatchOfOneRowTakes) {
  const LatencyProfile profile = LinearProfile();
  // Batches of 6 keep up with 2000 rows/s; four more rows would take 2 ms to arrive, but a batch
  // of one row takes 1250 µs, and the oldest request waits no longer than that.
  ViewBuilder b(2, &profile, /*rows_per_s=*/2000);
  b.view.slo_deadline_ns = kNow + 20'000 * kUs;
  BatchChoice choice = P99(20'000).Choose(b.view);
  EXPECT_EQ(choice.max_rows, 0);
  EXPECT_EQ(choice.wake_at_ns, kNow + 1250 * kUs);
  b.view.now_ns = choice.wake_at_ns;
  choice = P99(20'000).Choose(b.view);
  EXPECT_EQ(choice.max_rows, 2);
  EXPECT_EQ(choice.reason, BatchReason::kDelayExpired);
  // Counted from the oldest request's arrival, not from when the instance asks.
  b.view.now_ns = kNow;
  b.view.oldest_enqueue_ns = kNow - 1250 * kUs;
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
  // A batch of 6 takes 2500 µs: with 3000 µs left it may wait 500 µs at most.
  b.view.slo_deadline_ns = kNow + 3000 * kUs;
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
  // 3000 rows/s: at 85% headroom no size keeps up (16 rows: 3200/s), but 12 rows do with none,
  // so the oldest request still waits no longer than a batch of one row takes, not the 4.7 ms
  // that fourteen more rows would take to arrive.
  ViewBuilder b(2, &profile, /*rows_per_s=*/3000);
  b.view.slo_deadline_ns = kNow + 20'000 * kUs;
  const BatchChoice choice = P99(20'000).Choose(b.view);
  EXPECT_EQ(choice.max_rows, 0);
  EXPECT_EQ(choice.wake_at_ns, kNow + 1250 * kUs);
}

TEST(P99ModelPolicyTest, UnderOverloadWaitsForTheLargestBatchTheSloAllows) {
  const LatencyProfile profile = LinearProfile();
  ViewBuilder b(4, &profile, /*rows_per_s=*/5000);
  b.view.slo_deadline_ns = kNow + 20'000 * kUs;
  const BatchChoice choice = P99(20'000).Choose(b.view);
  EXPECT_EQ(choice.max_rows, 0);
  // Twelve more rows at 5000 rows/s: 2.4 ms, longer than a batch of one row takes (1250 µs); but
  // no size keeps up, so only full batches keep the backlog from growing.
  EXPECT_EQ(choice.wake_at_ns, kNow + 2400 * kUs);
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
  // Some size keeps up with 100 rows/s: a partial batch (3 of 16 rows) waits at most as long as
  // a batch of one row takes (1250 µs), then takes 1750 µs.
  view.load.arrival_rows_per_s = 100;
  EXPECT_EQ(P99(20'000).PredictCompletionNs(view), kNow + 1750 * kUs + 1250 * kUs);
  // Overloaded (10000 rows/s > 16 rows per 5 ms): it waits for the 13 rows it lacks, 1300 µs.
  view.load.arrival_rows_per_s = 10'000;
  EXPECT_EQ(P99(20'000).PredictCompletionNs(view), kNow + 1750 * kUs + 1300 * kUs);
  // A full batch does not wait.
  view.rows_ahead = 15;
  EXPECT_EQ(P99(20'000).PredictCompletionNs(view), kNow + 5000 * kUs);
}

}  // namespace
}  // namespace brigade::scheduler
