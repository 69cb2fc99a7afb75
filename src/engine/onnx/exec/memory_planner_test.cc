#include "engine/onnx/exec/memory_planner.h"

#include "gtest/gtest.h"

namespace brigade::engine::onnx {
namespace {

bool Disjoint(size_t a, size_t a_bytes, size_t b, size_t b_bytes) {
  return a + a_bytes <= b || b + b_bytes <= a;
}

TEST(MemoryPlannerTest, BuffersWithDisjointLifetimesShareMemory) {
  const BufferLifetime buffers[] = {{4096, 0, 1}, {4096, 2, 3}, {4096, 4, 5}};
  const MemoryPlan plan = PlanMemory(buffers);
  EXPECT_EQ(plan.arena_bytes, 4096u);
  EXPECT_EQ(plan.offsets[0], plan.offsets[1]);
}

TEST(MemoryPlannerTest, BuffersLiveAtTheSameTimeNeverOverlap) {
  const BufferLifetime buffers[] = {{1000, 0, 3}, {3000, 1, 2}, {500, 2, 5}, {2000, 4, 6}};
  const MemoryPlan plan = PlanMemory(buffers);
  for (size_t i = 0; i < 4; ++i) {
    for (size_t j = i + 1; j < 4; ++j) {
      const bool live_together = buffers[i].first_step <= buffers[j].last_step &&
                                 buffers[j].first_step <= buffers[i].last_step;
      if (live_together) {
        EXPECT_TRUE(Disjoint(plan.offsets[i], buffers[i].bytes, plan.offsets[j], buffers[j].bytes))
            << i << " and " << j;
      }
    }
  }
  EXPECT_LT(plan.arena_bytes, 1000u + 3000u + 500u + 2000u + 4 * kArenaAlignment);
}

TEST(MemoryPlannerTest, OffsetsAreAligned) {
  const BufferLifetime buffers[] = {{3, 0, 2}, {5, 0, 2}, {7, 1, 2}};
  const MemoryPlan plan = PlanMemory(buffers);
  for (size_t offset : plan.offsets) EXPECT_EQ(offset % kArenaAlignment, 0u);
  EXPECT_EQ(plan.arena_bytes, 3 * kArenaAlignment);
}

TEST(MemoryPlannerTest, ChainOfStepsNeedsOnlyTwoBuffersWorthOfMemory) {
  // a → b → c → d, each read only by the next step: at most two are live at once.
  std::vector<BufferLifetime> buffers;
  for (int i = 0; i < 10; ++i) buffers.push_back({1 << 20, i, i + 1});
  const MemoryPlan plan = PlanMemory(buffers);
  EXPECT_EQ(plan.arena_bytes, 2u << 20);
}

TEST(MemoryPlannerTest, EmptyBuffersTakeNoSpace) {
  const BufferLifetime buffers[] = {{0, 0, 1}};
  EXPECT_EQ(PlanMemory(buffers).arena_bytes, 0u);
}

}  // namespace
}  // namespace brigade::engine::onnx
