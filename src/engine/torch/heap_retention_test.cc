#include "engine/torch/heap_retention.h"

#include <sys/resource.h>

#include <cstdlib>
#include <string_view>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::engine {
namespace {

using ::testing::HasSubstr;

constexpr size_t kBlockBytes = size_t{4} << 20;
constexpr size_t kPageBytes = 4096;
constexpr int kBlocks = 3;

bool EnvironmentSetsMallocThresholds() {
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  return std::getenv("MALLOC_MMAP_THRESHOLD_") != nullptr ||
         std::getenv("MALLOC_TRIM_THRESHOLD_") != nullptr ||
         (tunables != nullptr &&
          std::string_view(tunables).find("glibc.malloc.") != std::string_view::npos);
}

long ThreadMinorFaults() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  return usage.ru_minflt;
}

// One forward()'s worth of what libtorch does: several multi-MiB tensors allocated, written and
// freed together. Returns the minor page faults this thread took over `rounds` rounds after two
// warm-up rounds. Volatile writes keep the compiler from eliding the allocations.
long FaultsOfRepeatedLargeAllocations(int rounds) {
  long faults = 0;
  for (int round = 0; round < rounds + 2; ++round) {
    const long before = ThreadMinorFaults();
    void* blocks[kBlocks];
    for (void*& block : blocks) {
      block = std::malloc(kBlockBytes);
      auto* bytes = static_cast<volatile char*>(block);
      for (size_t i = 0; i < kBlockBytes; i += kPageBytes) bytes[i] = 1;
    }
    for (void* block : blocks) std::free(block);
    if (round >= 2) faults += ThreadMinorFaults() - before;
  }
  return faults;
}

TEST(RetainFreedHeapOnceTest, DescribesWhatItDidAndIsIdempotent) {
  const std::string& first = RetainFreedHeapOnce();
  EXPECT_THAT(first, HasSubstr("malloc: "));
  EXPECT_EQ(&RetainFreedHeapOnce(), &first);
}

// Instances run on their own threads, whose arenas shrink their heaps (and so fault the pages
// in again) when more than the trim threshold is free: with glibc's defaults this pattern takes
// ~3k faults per round.
TEST(RetainFreedHeapOnceTest, FreedLargeBlocksAreReusedWithoutPageFaultsOnAnInstanceThread) {
  if (EnvironmentSetsMallocThresholds()) {
    GTEST_SKIP() << "the environment sets malloc's thresholds: " << RetainFreedHeapOnce();
  }
  EXPECT_THAT(RetainFreedHeapOnce(), HasSubstr("reused"));
  constexpr int kRounds = 8;
  long faults = 0;
  std::thread instance([&] { faults = FaultsOfRepeatedLargeAllocations(kRounds); });
  instance.join();
  const long pages_touched = static_cast<long>(kRounds * kBlocks * (kBlockBytes / kPageBytes));
  EXPECT_LT(faults, pages_touched / 20) << "of " << pages_touched << " pages touched";
}

}  // namespace
}  // namespace brigade::engine
