#include "telemetry/latency_stage.h"

#include "gtest/gtest.h"

namespace brigade::telemetry {
namespace {

StageClock FullClock() {
  StageClock clock;
  clock.Mark(Stage::kArrival, 1000);
  clock.Mark(Stage::kDecoded, 1010);
  clock.Mark(Stage::kPreprocessed, 1030);
  clock.Mark(Stage::kQueueEnter, 1031);
  clock.Mark(Stage::kQueueLeave, 1100);
  clock.Mark(Stage::kInferStart, 1110);
  clock.Mark(Stage::kInferEnd, 1300);
  clock.Mark(Stage::kPostprocessed, 1320);
  clock.Mark(Stage::kSent, 1400);
  return clock;
}

TEST(LatencyStageTest, StagesCutTheStampsAsDocumented) {
  const StageClock clock = FullClock();
  EXPECT_EQ(LatencyStageNs(clock, LatencyStage::kReceive), 10);
  EXPECT_EQ(LatencyStageNs(clock, LatencyStage::kPreprocess), 20);
  EXPECT_EQ(LatencyStageNs(clock, LatencyStage::kQueue), 69);
  EXPECT_EQ(LatencyStageNs(clock, LatencyStage::kCompute), 200);
  EXPECT_EQ(LatencyStageNs(clock, LatencyStage::kPostprocess), 20);
  EXPECT_EQ(LatencyStageNs(clock, LatencyStage::kSend), 80);
  EXPECT_EQ(LatencyStageNs(clock, LatencyStage::kTotal), 400);
}

TEST(LatencyStageTest, CacheHitHasNoQueueComputeOrPostprocess) {
  StageClock clock;
  clock.Mark(Stage::kArrival, 100);
  clock.Mark(Stage::kDecoded, 110);
  clock.Mark(Stage::kPreprocessed, 120);
  clock.Mark(Stage::kSent, 150);
  EXPECT_EQ(LatencyStageNs(clock, LatencyStage::kQueue), std::nullopt);
  EXPECT_EQ(LatencyStageNs(clock, LatencyStage::kCompute), std::nullopt);
  EXPECT_EQ(LatencyStageNs(clock, LatencyStage::kSend), std::nullopt);
  EXPECT_EQ(LatencyStageNs(clock, LatencyStage::kTotal), 50);
}

TEST(LatencyStageTest, ReversedStampsAreNotMeasured) {
  StageClock clock;
  clock.Mark(Stage::kArrival, 200);
  clock.Mark(Stage::kSent, 100);
  EXPECT_EQ(LatencyStageNs(clock, LatencyStage::kTotal), std::nullopt);
}

TEST(LatencyStageTest, NamesAreMetricLabels) {
  EXPECT_EQ(LatencyStageName(LatencyStage::kReceive), "receive");
  EXPECT_EQ(LatencyStageName(LatencyStage::kTotal), "total");
}

}  // namespace
}  // namespace brigade::telemetry
