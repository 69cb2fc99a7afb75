#include "engine/torch/blas_threads.h"

#include <dlfcn.h>

#include <cstdlib>

#include "core/strings.h"

namespace brigade::engine {
namespace {

// OpenBLAS's exported C API (cblas.h); openblas_get_parallel: 0 sequential, 1 pthreads, 2 OpenMP.
using GetParallelFn = int (*)();
using SetThreadsFn = void (*)(int);
using GetThreadsFn = int (*)();

std::string Limit() {
  auto get_parallel = reinterpret_cast<GetParallelFn>(dlsym(RTLD_DEFAULT, "openblas_get_parallel"));
  auto set_threads =
      reinterpret_cast<SetThreadsFn>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
  auto get_threads =
      reinterpret_cast<GetThreadsFn>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
  if (get_parallel == nullptr || set_threads == nullptr || get_threads == nullptr) {
    return "BLAS is not OpenBLAS (reference BLAS is much slower: select OpenBLAS with "
           "update-alternatives)";
  }
  switch (get_parallel()) {
    case 0:
      return "OpenBLAS (sequential)";
    case 2:
      return "OpenBLAS (OpenMP): follows each instance's intra-op threads";
    default:
      break;
  }
  for (const char* variable : {"OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS"}) {
    if (std::getenv(variable) != nullptr) {
      return StrCat("OpenBLAS (pthreads): pool of ", get_threads(), " thread(s), as ", variable,
                    " says");
    }
  }
  set_threads(1);
  return StrCat("OpenBLAS (pthreads): pool limited to ", get_threads(), " thread");
}

}  // namespace

const std::string& LimitOpenBlasThreadsOnce() {
  static const std::string result = Limit();
  return result;
}

}  // namespace brigade::engine
