#include "engine/torch/blas_threads.h"

#include <dlfcn.h>

#include <cstdlib>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::engine {
namespace {

using ::testing::HasSubstr;

TEST(LimitOpenBlasThreadsOnceTest, DescribesTheBlasAndIsIdempotent) {
  const std::string& first = LimitOpenBlasThreadsOnce();
  EXPECT_FALSE(first.empty());
  EXPECT_EQ(&LimitOpenBlasThreadsOnce(), &first);
}

TEST(LimitOpenBlasThreadsOnceTest, PthreadOpenBlasPoolShrinksToOneThreadUnlessEnvironmentSaysSo) {
  auto get_parallel = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "openblas_get_parallel"));
  auto get_threads = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
  if (get_parallel == nullptr || get_threads == nullptr || get_parallel() != 1) {
    GTEST_SKIP() << "BLAS here is not OpenBLAS with a pthread pool: " << LimitOpenBlasThreadsOnce();
  }
  const std::string& description = LimitOpenBlasThreadsOnce();
  if (std::getenv("OPENBLAS_NUM_THREADS") != nullptr ||
      std::getenv("GOTO_NUM_THREADS") != nullptr || std::getenv("OMP_NUM_THREADS") != nullptr) {
    EXPECT_THAT(description, HasSubstr("says"));
  } else {
    EXPECT_EQ(get_threads(), 1);
    EXPECT_THAT(description, HasSubstr("limited to 1 thread"));
  }
}

}  // namespace
}  // namespace brigade::engine
