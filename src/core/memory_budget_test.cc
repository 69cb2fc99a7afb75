#include "core/memory_budget.h"

#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace brigade {
namespace {

TEST(MemoryBudgetTest, ChargesUpToTheLimitAndRefusesPastIt) {
  MemoryBudget budget(100);
  MemoryBudget::Charge a = budget.TryCharge(60);
  ASSERT_TRUE(a);
  MemoryBudget::Charge b = budget.TryCharge(41);
  EXPECT_FALSE(b);
  EXPECT_EQ(budget.refusals(), 1u);
  MemoryBudget::Charge c = budget.TryCharge(40);
  EXPECT_TRUE(c);
  EXPECT_EQ(budget.in_use(), 100u);
}

TEST(MemoryBudgetTest, AChargeReturnsItsBytesWhenDestroyedOrReleased) {
  MemoryBudget budget(100);
  {
    MemoryBudget::Charge a = budget.TryCharge(70);
    EXPECT_EQ(budget.in_use(), 70u);
  }
  EXPECT_EQ(budget.in_use(), 0u);
  MemoryBudget::Charge b = budget.TryCharge(70);
  b.Release();
  EXPECT_EQ(budget.in_use(), 0u);
  EXPECT_EQ(b.bytes(), 0u);
}

TEST(MemoryBudgetTest, MovingAChargeMovesItsBytesOnce) {
  MemoryBudget budget(100);
  MemoryBudget::Charge a = budget.TryCharge(30);
  MemoryBudget::Charge b = std::move(a);
  EXPECT_EQ(budget.in_use(), 30u);
  MemoryBudget::Charge c = budget.TryCharge(10);
  c = std::move(b);  // c's own 10 go back
  EXPECT_EQ(budget.in_use(), 30u);
  EXPECT_EQ(c.bytes(), 30u);
}

TEST(MemoryBudgetTest, GrowAddsToAChargeWithinTheLimit) {
  MemoryBudget budget(100);
  MemoryBudget::Charge a = budget.TryCharge(0);
  ASSERT_TRUE(a);
  EXPECT_TRUE(a.Grow(90));
  EXPECT_FALSE(a.Grow(11));
  EXPECT_EQ(a.bytes(), 90u);
  EXPECT_EQ(budget.in_use(), 90u);
}

TEST(MemoryBudgetTest, AChargeFromNoBudgetGrowsWithoutLimit) {
  MemoryBudget::Charge unbudgeted;
  EXPECT_FALSE(unbudgeted);
  EXPECT_TRUE(unbudgeted.Grow(SIZE_MAX / 2));
}

TEST(MemoryBudgetTest, AHugeRequestIsRefusedWithoutWrappingTheCount) {
  MemoryBudget budget(100);
  MemoryBudget::Charge a = budget.TryCharge(50);
  EXPECT_FALSE(budget.TryCharge(SIZE_MAX));
  EXPECT_FALSE(a.Grow(SIZE_MAX - 10));
  EXPECT_EQ(budget.in_use(), 50u);
}

TEST(MemoryBudgetTest, ThePeakKeepsABurstBetweenTwoSamples) {
  MemoryBudget budget(100);
  { MemoryBudget::Charge burst = budget.TryCharge(80); }
  MemoryBudget::Charge held = budget.TryCharge(10);
  EXPECT_EQ(budget.TakePeak(), 80u);
  EXPECT_EQ(budget.TakePeak(), 10u);
}

TEST(MemoryBudgetTest, ConcurrentChargesNeverExceedTheLimit) {
  static constexpr size_t kLimit = 1000;
  MemoryBudget budget(kLimit);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&budget] {
      for (int i = 0; i < 20000; ++i) {
        MemoryBudget::Charge charge = budget.TryCharge(300);
        if (charge) {
          EXPECT_LE(budget.in_use(), kLimit);
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(budget.in_use(), 0u);
  EXPECT_LE(budget.TakePeak(), kLimit);
}

}  // namespace
}  // namespace brigade
