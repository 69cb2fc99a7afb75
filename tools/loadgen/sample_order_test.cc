#include "tools/loadgen/sample_order.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "gtest/gtest.h"

namespace brigade::loadgen {
namespace {

TEST(ZipfDistributionTest, ProbabilitiesFollowThePowerLawAndSumToOne) {
  absl::StatusOr<ZipfDistribution> zipf = ZipfDistribution::Create(10'000, 1.0);
  ASSERT_TRUE(zipf.ok()) << zipf.status();
  double harmonic = 0;
  for (int k = 1; k <= 10'000; ++k) harmonic += 1.0 / k;
  double total = 0;
  for (size_t rank = 0; rank < zipf->size(); ++rank) {
    EXPECT_NEAR(zipf->Probability(rank), 1.0 / ((rank + 1) * harmonic), 1e-12) << rank;
    total += zipf->Probability(rank);
  }
  EXPECT_NEAR(total, 1.0, 1e-9);
  // The figures the header quotes: the top sample ~10%, the top 100 ~53%.
  EXPECT_NEAR(zipf->Probability(0), 0.102, 0.001);
  double top100 = 0;
  for (size_t rank = 0; rank < 100; ++rank) top100 += zipf->Probability(rank);
  EXPECT_NEAR(top100, 0.53, 0.005);
  EXPECT_EQ(zipf->Probability(10'000), 0);
}

TEST(ZipfDistributionTest, DrawsMatchTheProbabilities) {
  absl::StatusOr<ZipfDistribution> zipf = ZipfDistribution::Create(50, 1.0);
  ASSERT_TRUE(zipf.ok());
  constexpr int kDraws = 200'000;
  std::vector<int> counts(50, 0);
  SampleRng rng(7);
  for (int i = 0; i < kDraws; ++i) ++counts[zipf->Sample(rng)];
  for (size_t rank = 0; rank < counts.size(); ++rank) {
    const double p = zipf->Probability(rank);
    const double sigma = std::sqrt(p * (1 - p) / kDraws);
    EXPECT_NEAR(static_cast<double>(counts[rank]) / kDraws, p, 5 * sigma) << "rank " << rank;
  }
  EXPECT_GT(counts[0], counts[1]);
  EXPECT_GT(counts[1], counts[10]);
}

TEST(ZipfDistributionTest, ExponentZeroIsUniform) {
  absl::StatusOr<ZipfDistribution> zipf = ZipfDistribution::Create(4, 0.0);
  ASSERT_TRUE(zipf.ok());
  for (size_t rank = 0; rank < 4; ++rank) EXPECT_DOUBLE_EQ(zipf->Probability(rank), 0.25);
  // u = 0.5 exactly is the start of rank 2's quarter.
  EXPECT_EQ(zipf->RankOf(uint64_t{1} << 63), 2u);
}

TEST(ZipfDistributionTest, EveryBitPatternMapsToAValidRank) {
  absl::StatusOr<ZipfDistribution> zipf = ZipfDistribution::Create(3, 2.0);
  ASSERT_TRUE(zipf.ok());
  EXPECT_EQ(zipf->RankOf(0), 0u);
  EXPECT_EQ(zipf->RankOf(std::numeric_limits<uint64_t>::max()), 2u);
  absl::StatusOr<ZipfDistribution> single = ZipfDistribution::Create(1, 1.0);
  ASSERT_TRUE(single.ok());
  EXPECT_EQ(single->RankOf(std::numeric_limits<uint64_t>::max()), 0u);
  EXPECT_EQ(single->Probability(0), 1.0);
}

TEST(ZipfDistributionTest, SameSeedSameSequence) {
  absl::StatusOr<ZipfDistribution> zipf = ZipfDistribution::Create(1000, 1.0);
  ASSERT_TRUE(zipf.ok());
  SampleRng a(42);
  SampleRng b(42);
  SampleRng c(43);
  int differ = 0;
  for (int i = 0; i < 1000; ++i) {
    const size_t x = zipf->Sample(a);
    EXPECT_EQ(x, zipf->Sample(b));
    differ += x != zipf->Sample(c);
  }
  EXPECT_GT(differ, 0);
}

TEST(ZipfDistributionTest, RejectsNoSamplesAndBadExponents) {
  EXPECT_EQ(ZipfDistribution::Create(0, 1.0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ZipfDistribution::Create(10, -0.5).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ZipfDistribution::Create(10, std::nan("")).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ZipfDistribution::Create(10, 11).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace brigade::loadgen
